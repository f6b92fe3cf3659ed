#!/bin/bash
# --args-file refuses control flow by name (sim.megatron.msg.control_flow)
if [ -n "$TP" ]; then
  TP=2
fi
torchrun pretrain_gpt.py --tensor-model-parallel-size $TP
