"""Print the issue-18 statistics of a folder of generated episodes (goals per episode, predicate,
count, reference and scenario shares, concise lengths, infeasible reasons).

    PYTHONPATH=. python benchmarks/gen_stats.py /tmp/gen-v2 [--json stats.json]
"""

import sys

from evaluation.episode_stats import main

if __name__ == "__main__":
    sys.exit(main())
