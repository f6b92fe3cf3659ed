#!/bin/bash
# a priced argument whose value the script never sets (sim.megatron.msg.unset_value)
torchrun pretrain_gpt.py --num-layers $NUM_LAYERS --hidden-size 1024 --num-attention-heads 16 --vocab-size 1000
