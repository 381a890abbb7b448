"""What the diagnosis benchmarks read from a results.json document."""


def efficiency(doc):
    """Efficiency at the largest count the models were fitted to (not oversubscribed)."""
    for s in (doc.get("analysis") or {}).get("series", []):
        top = [p for p in s["points"] if p["count"] <= s["fitted_up_to"]]
        if top and top[-1].get("efficiency") is not None:
            return top[-1]["efficiency"]
    return None
