"""croissant.json of a release's folder: Croissant 1.1 metadata with the Responsible-AI (rai:) fields.

Written by hand (mlcroissant is a development tool here); the tests validate it with mlcroissant
and read its records back. Lists are ``isArray`` fields, the scores a 2-D array (arrayShape "-1,-1").
What only the researcher can say is written as "TODO: ..." for them to fill in.
"""

import json

from testsets.shortcuts.report import limitation_sentence

from .card import SATO_2020_BIBTEX, pretty_name
from .facts import ReleaseFacts
from .lm_eval_task import DATA_FILE
from .records import RECORD_FIELDS

CROISSANT_1_1 = "http://mlcommons.org/croissant/1.1"
FILE_ID = "test-jsonl"
RECORD_SET = "questions"

# mlcroissant's standard @context for 1.1 (mlcroissant._src.core.rdf.make_context)
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

DATA_TYPES = {"string": "sc:Text", "int64": "sc:Integer"}


def render_croissant(facts: ReleaseFacts, *, jsonl_sha256: str) -> bytes:
    metadata = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CROISSANT_1_1,
        "name": facts.name,
        "description": f"{pretty_name(facts)}: {len(facts.records)} dialogue contexts, each with one ground-truth "
        f"response and {facts.manifest.get('false_per_question')} human-filtered false candidates "
        "(Sato et al., ACL 2020).",
        "license": facts.testset.license,
        "url": "TODO: where the release is published",
        "version": "1.0.0",
        "datePublished": str(facts.manifest.get("created_at", ""))[:10],
        "citeAs": SATO_2020_BIBTEX,
        "inLanguage": "en",
        **_rai(facts),
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": FILE_ID,
                "name": FILE_ID,
                "description": "One JSON object per question.",
                "contentUrl": DATA_FILE,
                "encodingFormat": "application/jsonlines",
                "sha256": jsonl_sha256,
            }
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": RECORD_SET,
                "name": RECORD_SET,
                "description": "The release's questions, in its order.",
                "key": {"@id": f"{RECORD_SET}/question_id"},
                "field": [_field(name, kind, meaning) for name, (kind, meaning) in RECORD_FIELDS.items()],
            }
        ],
    }
    return (json.dumps(metadata, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _field(name: str, kind: str, meaning: str) -> dict:
    depth = kind.count("list:")
    field = {
        "@type": "cr:Field",
        "@id": f"{RECORD_SET}/{name}",
        "name": name,
        "description": meaning,
        "dataType": DATA_TYPES[kind.rsplit(" ", 1)[-1]],
        "source": {"fileObject": {"@id": FILE_ID}, "extract": {"column": name}},
    }
    if depth:
        field["isArray"] = True
        field["arrayShape"] = ",".join(["-1"] * depth)
    return field


def _rai(facts: ReleaseFacts) -> dict:
    m = facts.manifest
    pay = " ".join(facts.pay) or "TODO: who the annotators were, how they were recruited and what they were paid."
    return {
        "rai:dataCollection": (
            f"Dialogue contexts and ground-truth responses from the dataset {m.get('dataset')!r}; false "
            "candidates retrieved from a repository of utterances (or generated), then scored 0-5 by human "
            "annotators and filtered by fixed rules (see the card's 'How it was built')."
        ),
        "rai:dataCollectionType": ["Secondary Data Analysis", "Crowdsourced", "Others"],
        "rai:dataAnnotationProtocol": (
            "Each annotator sees the context and one response and scores how well it continues the dialogue "
            f"(0-5); {m.get('annotators_per_item')} annotators per response are planned. Responses whose "
            "scores pass the filter rules are kept as ground truths or false candidates."
        ),
        "rai:dataAnnotationPlatform": pay,
        "rai:annotationsPerItem": str(m.get("annotators_per_item")),
        "rai:annotatorDemographics": "TODO: annotators' demographics (not recorded by WellChosen).",
        "rai:dataAnnotationAnalysis": (
            f"Fleiss' kappa of the release's scores: {facts.agreement['fleiss']['6']['kappa']} (six classes), "
            f"{facts.agreement['fleiss']['2']['kappa']} (two classes, > 3 vs <= 3); Krippendorff's alpha "
            f"(ordinal) {facts.agreement['krippendorff_ordinal']['alpha']}; intervals in the card."
        ),
        "rai:personalSensitiveInformation": (
            "TODO: the texts come from the source corpus as it was released; WellChosen does not screen "
            "them for personal information. No exported field names an annotator: scores come without who gave them."
        ),
        "rai:dataUseCases": "Evaluating and ranking dialogue systems by response-selection accuracy; not training.",
        "rai:dataBiases": (
            "The retrievers and filter thresholds decide which false candidates exist; the annotators' "
            "judgement and the source corpus's topics and register carry over. TODO: known biases of the corpus."
        ),
        "rai:dataLimitations": " ".join(
            filter(
                None,
                [
                    "English open-domain chit-chat only; few annotators per response; a fixed, small set of "
                    "false candidates per question.",
                    limitation_sentence(m.get("shortcut_audit") or {}),
                ],
            )
        ),
        "rai:dataReleaseMaintenancePlan": "A release is frozen: corrections are published as a new release.",
    }
