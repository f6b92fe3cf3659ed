#!/bin/bash
# set -- sets the positional parameters (sim.megatron.msg.set_args)
set -- --num-layers 2
torchrun pretrain_gpt.py "$@"
