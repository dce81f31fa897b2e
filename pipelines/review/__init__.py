"""``benchsmith review``: a local page to audit a built release one item at a time."""

from pipelines.review.app import ReviewSession, create_app, serve
from pipelines.review.items import ReviewItem, load_items

__all__ = ["ReviewItem", "ReviewSession", "create_app", "load_items", "serve"]
