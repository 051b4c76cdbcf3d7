"""Re-ranking speech-recognition n-best lists with the library's sentence scorers (`electra-rerank`,
`electra_studies.commands.rerank`): docs/rerank.md."""
