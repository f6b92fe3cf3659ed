#!/bin/bash
# two launch commands: which one ran? (sim.megatron.msg.two_launch)
torchrun pretrain_gpt.py --lr 1e-4
python pretrain_gpt.py --lr 2e-4
