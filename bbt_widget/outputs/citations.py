"""The references of the methods a report ran: one entry per work, with authors, year,
venue and DOI or arXiv id, as text for the report and as BibTeX for a manuscript.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.result import BBTResult


@dataclass(frozen=True)
class Reference:
    """One cited work.

    Attributes
    ----------
    key
        The BibTeX key.
    short
        How the text cites it, e.g. ``"Wainer 2022"``.
    text
        The full reference, plain text.
    bibtex
        The BibTeX entry.
    """

    key: str
    short: str
    text: str
    bibtex: str


def _ref(key: str, short: str, text: str, kind: str, **fields: str) -> Reference:
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields.items())
    return Reference(key, short, text, f"@{kind}{{{key},\n{body}\n}}")


#: Every work the outputs cite, by key.
REFERENCES = {
    r.key: r
    for r in (
        _ref(
            "wainer2022bbt",
            "Wainer 2022",
            "J. Wainer. A Bayesian Bradley-Terry model to compare multiple ML algorithms on "
            "multiple data sets. arXiv:2208.04935, 2022.",
            "misc",
            author="Wainer, Jacques",
            title="A {Bayesian} {Bradley-Terry} model to compare multiple {ML} algorithms on "
            "multiple data sets",
            year="2022",
            eprint="2208.04935",
            archivePrefix="arXiv",
            doi="10.48550/arXiv.2208.04935",
        ),
        _ref(
            "bradley1952",
            "Bradley and Terry 1952",
            "R. A. Bradley and M. E. Terry. Rank analysis of incomplete block designs: I. The "
            "method of paired comparisons. Biometrika 39(3/4):324-345, 1952. "
            "doi:10.2307/2334029.",
            "article",
            author="Bradley, Ralph Allan and Terry, Milton E.",
            title="Rank analysis of incomplete block designs: {I}. The method of paired "
            "comparisons",
            journal="Biometrika",
            volume="39",
            number="3/4",
            pages="324--345",
            year="1952",
            doi="10.2307/2334029",
        ),
        _ref(
            "davidson1970",
            "Davidson 1970",
            "R. R. Davidson. On extending the Bradley-Terry model to accommodate ties in "
            "paired comparison experiments. Journal of the American Statistical Association "
            "65(329):317-328, 1970. doi:10.1080/01621459.1970.10481082.",
            "article",
            author="Davidson, Roger R.",
            title="On extending the {Bradley-Terry} model to accommodate ties in paired "
            "comparison experiments",
            journal="Journal of the American Statistical Association",
            volume="65",
            number="329",
            pages="317--328",
            year="1970",
            doi="10.1080/01621459.1970.10481082",
        ),
        _ref(
            "carpenter2017stan",
            "Carpenter et al. 2017",
            "B. Carpenter, A. Gelman, M. D. Hoffman, D. Lee, B. Goodrich, M. Betancourt, M. "
            "Brubaker, J. Guo, P. Li and A. Riddell. Stan: a probabilistic programming "
            "language. Journal of Statistical Software 76(1):1-32, 2017. "
            "doi:10.18637/jss.v076.i01.",
            "article",
            author="Carpenter, Bob and Gelman, Andrew and Hoffman, Matthew D. and Lee, Daniel "
            "and Goodrich, Ben and Betancourt, Michael and Brubaker, Marcus and Guo, Jiqiang "
            "and Li, Peter and Riddell, Allen",
            title="{Stan}: a probabilistic programming language",
            journal="Journal of Statistical Software",
            volume="76",
            number="1",
            pages="1--32",
            year="2017",
            doi="10.18637/jss.v076.i01",
        ),
        _ref(
            "tierney1994",
            "Tierney 1994",
            "L. Tierney. Markov chains for exploring posterior distributions. The Annals of "
            "Statistics 22(4):1701-1728, 1994. doi:10.1214/aos/1176325750.",
            "article",
            author="Tierney, Luke",
            title="{Markov} chains for exploring posterior distributions",
            journal="The Annals of Statistics",
            volume="22",
            number="4",
            pages="1701--1728",
            year="1994",
            doi="10.1214/aos/1176325750",
        ),
        _ref(
            "polson2013",
            "Polson et al. 2013",
            "N. G. Polson, J. G. Scott and J. Windle. Bayesian inference for logistic models "
            "using Pólya-Gamma latent variables. Journal of the American Statistical "
            "Association 108(504):1339-1349, 2013. doi:10.1080/01621459.2013.829001.",
            "article",
            author="Polson, Nicholas G. and Scott, James G. and Windle, Jesse",
            title="{Bayesian} inference for logistic models using {P}{\\'o}lya-{Gamma} latent "
            "variables",
            journal="Journal of the American Statistical Association",
            volume="108",
            number="504",
            pages="1339--1349",
            year="2013",
            doi="10.1080/01621459.2013.829001",
        ),
        _ref(
            "vehtari2017loo",
            "Vehtari et al. 2017",
            "A. Vehtari, A. Gelman and J. Gabry. Practical Bayesian model evaluation using "
            "leave-one-out cross-validation and WAIC. Statistics and Computing 27:1413-1432, "
            "2017. doi:10.1007/s11222-016-9696-4.",
            "article",
            author="Vehtari, Aki and Gelman, Andrew and Gabry, Jonah",
            title="Practical {Bayesian} model evaluation using leave-one-out cross-validation "
            "and {WAIC}",
            journal="Statistics and Computing",
            volume="27",
            pages="1413--1432",
            year="2017",
            doi="10.1007/s11222-016-9696-4",
        ),
        _ref(
            "rojasdelgado2022",
            "Rojas-Delgado et al. 2022",
            "J. Rojas-Delgado, J. Ceberio, B. Calvo and J. A. Lozano. Bayesian performance "
            "analysis for algorithm ranking comparison. IEEE Transactions on Evolutionary "
            "Computation, 2022. doi:10.1109/TEVC.2022.3208110.",
            "article",
            author="Rojas-Delgado, Jairo and Ceberio, Josu and Calvo, Borja and Lozano, Jose A.",
            title="{Bayesian} performance analysis for algorithm ranking comparison",
            journal="IEEE Transactions on Evolutionary Computation",
            year="2022",
            doi="10.1109/TEVC.2022.3208110",
        ),
        _ref(
            "caron2012",
            "Caron and Doucet 2012",
            "F. Caron and A. Doucet. Efficient Bayesian inference for generalized Bradley-Terry "
            "models. Journal of Computational and Graphical Statistics 21(1):174-196, 2012. "
            "doi:10.1080/10618600.2012.638220.",
            "article",
            author="Caron, Fran{\\c{c}}ois and Doucet, Arnaud",
            title="Efficient {Bayesian} inference for generalized {Bradley-Terry} models",
            journal="Journal of Computational and Graphical Statistics",
            volume="21",
            number="1",
            pages="174--196",
            year="2012",
            doi="10.1080/10618600.2012.638220",
        ),
        _ref(
            "plackett1975",
            "Plackett 1975",
            "R. L. Plackett. The analysis of permutations. Journal of the Royal Statistical "
            "Society, Series C (Applied Statistics) 24(2):193-202, 1975. doi:10.2307/2346567.",
            "article",
            author="Plackett, Robin L.",
            title="The analysis of permutations",
            journal="Journal of the Royal Statistical Society, Series C (Applied Statistics)",
            volume="24",
            number="2",
            pages="193--202",
            year="1975",
            doi="10.2307/2346567",
        ),
        _ref(
            "luce1959",
            "Luce 1959",
            "R. D. Luce. Individual Choice Behavior: A Theoretical Analysis. Wiley, 1959.",
            "book",
            author="Luce, R. Duncan",
            title="Individual Choice Behavior: A Theoretical Analysis",
            publisher="Wiley",
            address="New York",
            year="1959",
        ),
        _ref(
            "vitelli2018mallows",
            "Vitelli et al. 2018",
            "V. Vitelli, O. Sørensen, M. Crispino, A. Frigessi and E. Arjas. Probabilistic "
            "preference learning with the Mallows rank model. Journal of Machine Learning "
            "Research 18(158):1-49, 2018.",
            "article",
            author="Vitelli, Valeria and S{\\o}rensen, {\\O}ystein and Crispino, Marta and "
            "Frigessi, Arnoldo and Arjas, Elja",
            title="Probabilistic preference learning with the {Mallows} rank model",
            journal="Journal of Machine Learning Research",
            volume="18",
            number="158",
            pages="1--49",
            year="2018",
        ),
        _ref(
            "benavoli2017",
            "Benavoli et al. 2017",
            "A. Benavoli, G. Corani, J. Demšar and M. Zaffalon. Time for a change: a tutorial "
            "for comparing multiple classifiers through Bayesian analysis. Journal of Machine "
            "Learning Research 18(77):1-36, 2017.",
            "article",
            author="Benavoli, Alessio and Corani, Giorgio and Dem{\\v{s}}ar, Janez and "
            "Zaffalon, Marco",
            title="Time for a change: a tutorial for comparing multiple classifiers through "
            "{Bayesian} analysis",
            journal="Journal of Machine Learning Research",
            volume="18",
            number="77",
            pages="1--36",
            year="2017",
        ),
        _ref(
            "corani2017",
            "Corani et al. 2017",
            "G. Corani, A. Benavoli, J. Demšar, F. Mangili and M. Zaffalon. Statistical "
            "comparison of classifiers through Bayesian hierarchical modelling. Machine "
            "Learning 106:1817-1837, 2017. doi:10.1007/s10994-017-5641-9.",
            "article",
            author="Corani, Giorgio and Benavoli, Alessio and Dem{\\v{s}}ar, Janez and "
            "Mangili, Francesca and Zaffalon, Marco",
            title="Statistical comparison of classifiers through {Bayesian} hierarchical modelling",
            journal="Machine Learning",
            volume="106",
            pages="1817--1837",
            year="2017",
            doi="10.1007/s10994-017-5641-9",
        ),
        _ref(
            "nadeau2003",
            "Nadeau and Bengio 2003",
            "C. Nadeau and Y. Bengio. Inference for the generalization error. Machine "
            "Learning 52:239-281, 2003. doi:10.1023/A:1024068626366.",
            "article",
            author="Nadeau, Claude and Bengio, Yoshua",
            title="Inference for the generalization error",
            journal="Machine Learning",
            volume="52",
            pages="239--281",
            year="2003",
            doi="10.1023/A:1024068626366",
        ),
        _ref(
            "demsar2006",
            "Demšar 2006",
            "J. Demšar. Statistical comparisons of classifiers over multiple data sets. "
            "Journal of Machine Learning Research 7:1-30, 2006.",
            "article",
            author="Dem{\\v{s}}ar, Janez",
            title="Statistical comparisons of classifiers over multiple data sets",
            journal="Journal of Machine Learning Research",
            volume="7",
            pages="1--30",
            year="2006",
        ),
        _ref(
            "friedman1937",
            "Friedman 1937",
            "M. Friedman. The use of ranks to avoid the assumption of normality implicit in the "
            "analysis of variance. Journal of the American Statistical Association "
            "32(200):675-701, 1937. doi:10.1080/01621459.1937.10503522.",
            "article",
            author="Friedman, Milton",
            title="The use of ranks to avoid the assumption of normality implicit in the "
            "analysis of variance",
            journal="Journal of the American Statistical Association",
            volume="32",
            number="200",
            pages="675--701",
            year="1937",
            doi="10.1080/01621459.1937.10503522",
        ),
        _ref(
            "nemenyi1963",
            "Nemenyi 1963",
            "P. B. Nemenyi. Distribution-free multiple comparisons. PhD thesis, Princeton "
            "University, 1963.",
            "phdthesis",
            author="Nemenyi, Peter Bjorn",
            title="Distribution-free multiple comparisons",
            school="Princeton University",
            year="1963",
        ),
        _ref(
            "wilcoxon1945",
            "Wilcoxon 1945",
            "F. Wilcoxon. Individual comparisons by ranking methods. Biometrics Bulletin "
            "1(6):80-83, 1945. doi:10.2307/3001968.",
            "article",
            author="Wilcoxon, Frank",
            title="Individual comparisons by ranking methods",
            journal="Biometrics Bulletin",
            volume="1",
            number="6",
            pages="80--83",
            year="1945",
            doi="10.2307/3001968",
        ),
        _ref(
            "holm1979",
            "Holm 1979",
            "S. Holm. A simple sequentially rejective multiple test procedure. Scandinavian "
            "Journal of Statistics 6(2):65-70, 1979.",
            "article",
            author="Holm, Sture",
            title="A simple sequentially rejective multiple test procedure",
            journal="Scandinavian Journal of Statistics",
            volume="6",
            number="2",
            pages="65--70",
            year="1979",
        ),
        _ref(
            "shapiro1965",
            "Shapiro and Wilk 1965",
            "S. S. Shapiro and M. B. Wilk. An analysis of variance test for normality (complete "
            "samples). Biometrika 52(3/4):591-611, 1965. doi:10.2307/2333709.",
            "article",
            author="Shapiro, Samuel S. and Wilk, Martin B.",
            title="An analysis of variance test for normality (complete samples)",
            journal="Biometrika",
            volume="52",
            number="3/4",
            pages="591--611",
            year="1965",
            doi="10.2307/2333709",
        ),
        _ref(
            "benavoli2014",
            "Benavoli et al. 2014",
            "A. Benavoli, G. Corani, F. Mangili, M. Zaffalon and F. Ruggeri. A Bayesian "
            "Wilcoxon signed-rank test based on the Dirichlet process. Proceedings of the 31st "
            "International Conference on Machine Learning, PMLR 32(2):1026-1034, 2014.",
            "inproceedings",
            author="Benavoli, Alessio and Corani, Giorgio and Mangili, Francesca and Zaffalon, "
            "Marco and Ruggeri, Fabrizio",
            title="A {Bayesian} {Wilcoxon} signed-rank test based on the {Dirichlet} process",
            booktitle="Proceedings of the 31st International Conference on Machine Learning",
            series="PMLR",
            volume="32",
            pages="1026--1034",
            year="2014",
        ),
    )
}

#: The works each part of a report rests on, by the name of the part: ``bbt`` (the model,
#: always), ``stan`` or ``numpy`` (the engine that sampled it: Stan's NUTS, or the numpy
#: engine's Pólya-Gamma Gibbs sampler), ``davidson`` (ties modelled), ``robustness`` (the
#: influence of single data sets), and the other methods by their ``methods=`` names.
CITED_BY = {
    "bbt": ("wainer2022bbt", "bradley1952"),
    "stan": ("carpenter2017stan",),
    "numpy": ("polson2013",),
    "independence": ("tierney1994",),
    "davidson": ("davidson1970",),
    "robustness": ("vehtari2017loo",),
    "plackett-luce": ("rojasdelgado2022", "plackett1975", "luce1959", "caron2012"),
    "mallows": ("rojasdelgado2022", "vitelli2018mallows"),
    "hierarchical": ("corani2017", "benavoli2017", "nadeau2003", "demsar2006"),
    "friedman": (
        "friedman1937",
        "demsar2006",
        "nemenyi1963",
        "wilcoxon1945",
        "holm1979",
        "shapiro1965",
    ),
    "signed-rank": ("benavoli2014", "benavoli2017"),
    "sign": ("benavoli2017",),
}


def references(result: BBTResult | None = None, parts: Iterable[str] = ()) -> list[Reference]:
    """The works a report of ``result`` with ``parts`` (see :data:`CITED_BY`) cites, each
    once, in the order first cited."""
    names = ["bbt", "numpy" if result is not None and result.engine == "numpy" else "stan"]
    kernels = str(result.draws.info.get("kernel")).split("+") if result is not None else []
    if "davidson" in kernels:  # the numpy engine's Metropolis-Hastings, no Pólya-Gamma draws
        names[1] = "independence"
    if "independence" in kernels:
        names.append("independence")
    if result is not None and result.settings.get("ties") == "davidson":
        names.append("davidson")
    names += [p for p in parts if p not in names]
    unknown = [n for n in names if n not in CITED_BY]
    if unknown:
        raise ValueError(f"no references for {unknown}; known parts: {', '.join(CITED_BY)}")
    keys = dict.fromkeys(k for n in names for k in CITED_BY[n])
    return [REFERENCES[k] for k in keys]


def bibtex(result: BBTResult | None = None, parts: Iterable[str] = ()) -> str:
    """BibTeX entries of the works a report of ``result`` cites (see :func:`references`),
    ready for a manuscript's ``.bib`` file.

    Examples
    --------
    >>> from bbt_widget.outputs.citations import bibtex
    >>> print(bibtex().splitlines()[0])
    @misc{wainer2022bbt,
    """
    return "\n\n".join(r.bibtex for r in references(result, parts)) + "\n"
