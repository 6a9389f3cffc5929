"""The grader service: replays (task, split, seed, actions) and returns a verified score."""
