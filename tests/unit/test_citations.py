"""The references the outputs cite: complete entries, chosen by what a report ran."""

from __future__ import annotations

import re

import pytest

from bbt_widget.outputs.citations import CITED_BY, REFERENCES, bibtex, references


def test_every_reference_names_authors_year_and_where_it_appeared():
    for ref in REFERENCES.values():
        assert re.search(r"\b(19|20)\d\d\b", ref.text), ref.key  # the year
        # an identifier, or a venue with volume and pages (JMLR has no DOI), a book or a thesis
        ident = re.search(r"doi:10\.\d{4,}/|arXiv:\d{4}\.\d{4,}", ref.text)
        venue = (
            re.search(r"\d+(\(\d+\))?:\d+-\d+", ref.text)
            or "Wiley" in ref.text
            or "PhD thesis" in ref.text
        )
        assert ident or venue, ref.key
        assert ref.bibtex.startswith("@") and f"{{{ref.key}," in ref.bibtex
        assert ref.bibtex.count("{") == ref.bibtex.count("}"), ref.key
    assert "arXiv:2208.04935" in REFERENCES["wainer2022bbt"].text
    assert "doi:10.1007/s10994-017-5641-9" in REFERENCES["corani2017"].text
    assert "18(77):1-36" in REFERENCES["benavoli2017"].text


def test_the_works_cited_follow_what_was_run():
    keys = [r.key for r in references(parts=["plackett-luce", "hierarchical"])]
    assert keys[:3] == ["wainer2022bbt", "bradley1952", "carpenter2017stan"]  # the model
    assert {"rojasdelgado2022", "plackett1975", "luce1959", "caron2012", "corani2017"} <= set(keys)
    assert "nadeau2003" in keys
    assert len(keys) == len(set(keys))
    assert "davidson1970" not in keys
    text = bibtex(parts=["robustness"])
    assert text.count("\n@") == 3 and "@article{vehtari2017loo," in text
    assert set(CITED_BY) >= {"bbt", "plackett-luce", "hierarchical", "robustness"}
    with pytest.raises(ValueError, match="no references for \\['bayes-factor'\\]"):
        references(parts=["bayes-factor"])
