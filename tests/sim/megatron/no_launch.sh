#!/bin/bash
# no command runs a .py script (sim.megatron.msg.no_launch)
ARGS="--num-layers 2"
echo $ARGS
