"""Cost of model calls: token usage times a price table the user keeps.

Prices change and differ by contract, so none are built in: the table is a TOML file
(config ``providers.prices_file``, default ``<data dir>/prices.toml``), one table per
``provider/model`` with prices in US dollars per million tokens::

    ["openai/gpt-4o"]
    input_per_mtok = 2.50
    output_per_mtok = 10.00

A model missing from the table is *unpriced*: its usage is counted, its cost is ``None``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cleveragents.errors import ValidationError


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return round((input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6, 6)


def load_prices(path: Path) -> dict[str, Price]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValidationError(f"price table {path}: {exc}") from None
    prices = {}
    for model, row in data.items():
        try:
            prices[model] = Price(float(row["input_per_mtok"]), float(row["output_per_mtok"]))
        except (KeyError, TypeError, ValueError):
            raise ValidationError(
                f'price table {path}: ["{model}"] needs input_per_mtok and output_per_mtok (numbers)'
            ) from None
    return prices


def cost(prices: Mapping[str, Price], model: str, usage: Mapping[str, int]) -> float | None:
    price = prices.get(model)
    if price is None:
        return None
    return price.cost(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)))
