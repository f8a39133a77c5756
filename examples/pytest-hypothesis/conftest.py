"""pytest options for flakegate: --samples sets Hypothesis's max_examples.

The seed comes from Hypothesis's own --hypothesis-seed option. No example
database is kept: each run must depend on the seed alone.
"""

from hypothesis import settings


def pytest_addoption(parser):
    parser.addoption(
        "--samples",
        type=int,
        default=100,
        help="Hypothesis examples per property (flakegate's {samples})",
    )


def pytest_configure(config):
    settings.register_profile(
        "flakegate",
        max_examples=config.getoption("--samples"),
        database=None,
        deadline=None,
    )
    settings.load_profile("flakegate")
