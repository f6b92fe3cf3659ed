#!/bin/bash
# --args-file refuses source by name (sim.megatron.msg.source)
source ./env.sh
torchrun pretrain_gpt.py --num-layers $NL
