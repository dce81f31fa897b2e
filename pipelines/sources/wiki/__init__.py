"""Wikipedia readers: XML, multistream and Enterprise HTML dumps, the MediaWiki API, wikitext."""
