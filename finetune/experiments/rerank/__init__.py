"""Re-ranking speech-recognition n-best lists with the library's sentence scorers (`electra-rerank`,
`python -m finetune.experiments.rerank`): docs/rerank.md."""
