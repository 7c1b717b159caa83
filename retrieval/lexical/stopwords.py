"""English stop words removed by every lexical backend, so that content words drive the match.

Lucene's default English list (33 words) keeps pronouns and auxiliaries ("you", "i", "do",
"what"), which dominate dialogue; matching a ground truth on them retrieves nothing related.
This broader list (function words, auxiliaries, pronouns, the pieces that tokenised corpora
split contractions into, and the fillers and light verbs of conversation: "thanks", "really",
"hi", "know", "take") is shared by tantivy and Elasticsearch so that both rank alike.
"""

ENGLISH_STOP_WORDS: tuple[str, ...] = tuple(
    sorted(
        set(
            """
a about above after again against all am an and any are aren as at be because been before being below between
both but by can cannot could couldn d did didn do does doesn doing don down during each few for from further had
hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it its itself
just ll m ma me might mightn more most must mustn my myself needn no nor not now o of off on once only or other
ought our ours ourselves out over own re s same shall shan she should shouldn so some such t than that the their
theirs them themselves then there these they this those through to too under until up us ve very was wasn we
were weren what when where which while who whom why will with won would wouldn y you your yours yourself
yourselves oh ok okay yes yeah well also get got go going let lets
ah eh er hmm uh um umm hey hi hello bye goodbye thank thanks please sorry sure really mr mrs ms
know like want think say said tell told come came take took make made see saw look one much many lot
""".split()
        )
    )
)
