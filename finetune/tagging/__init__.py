"""Token tagging: readers of tagged text, conlleval-exact metrics, windows of word pieces, the fine-tuning task."""
