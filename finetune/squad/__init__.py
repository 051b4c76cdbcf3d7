"""SQuAD 1.1 / 2.0 question answering: readers, sliding-window features, post-processing, official metrics and
`task.SquadTask`."""
