#!/bin/bash
# The HoloMind figures quoted in README.md and the issue notes, on the committed dev episodes:
#   main run: every 4th dev episode (31), detailed instructions, two shards in parallel (one per core);
#   the experience-pool pair and the ablations: every 8th (16 episodes, a subset of the main run's).
#   The pair runs the same 16 episodes with a fresh pool and with the pool the main run left behind
#   (it saw these episodes among its 31), so the second is a second visit; the fresh-pool run is
#   also the "full" row the ablations compare with. Concise instructions: every 24th (6 episodes).
#   Rerunning resumes; delete the runs/ folders to start over.
set -u
cd "$(dirname "$0")/.."
W=.venv/bin/worldmind
E=evaluation/data/episodes_dev
S="--every 8"
$W eval longact --episodes $E --planner deterministic --every 4 --shard 0/2 --out runs/holomind-dev &
$W eval longact --episodes $E --planner deterministic --every 4 --shard 1/2 --out runs/holomind-dev &
wait
$W eval longact --episodes $E --planner deterministic --every 4 --out runs/holomind-dev  # full summary
cp runs/holomind-dev/experience_pool.json runs/pool-after-main.json
rm -f runs/pool-fresh.json
$W eval longact --episodes $E --planner deterministic $S --experience runs/pool-fresh.json --out runs/exp-fresh &
$W eval longact --episodes $E --planner deterministic $S --experience runs/pool-after-main.json --out runs/exp-persisted &
wait
$W eval longact --episodes $E --planner deterministic $S --ablate critic --out runs/ablate-critic &
$W eval longact --episodes $E --planner deterministic $S --ablate episodic --out runs/ablate-episodic &
wait
$W eval longact --episodes $E --planner deterministic $S --ablate high-level --shard 0/2 --out runs/ablate-high-level &
$W eval longact --episodes $E --planner deterministic $S --ablate high-level --shard 1/2 --out runs/ablate-high-level &
wait
$W eval longact --episodes $E --planner deterministic $S --ablate high-level --out runs/ablate-high-level  # summary
$W eval longact --episodes $E --planner deterministic --every 24 --instruction concise --shard 0/2 --out runs/concise &
$W eval longact --episodes $E --planner deterministic --every 24 --instruction concise --shard 1/2 --out runs/concise &
wait
$W eval longact --episodes $E --planner deterministic --every 24 --instruction concise --out runs/concise  # summary
