#!/bin/bash
# a here-document is refused (sim.megatron.msg.heredoc)
cat <<EOF > args.txt
--num-layers 2
EOF
torchrun pretrain_gpt.py --lr 1e-4
