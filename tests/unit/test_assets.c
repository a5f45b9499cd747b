/* Embedded assets: lookup, ETag, If-None-Match. */
#define _GNU_SOURCE
#include <string.h>
#include "tap.h"
#include "../../fcgi/assets.h"

UNIT_TEST(test_assets)
{
	const char *routes[] = {"/", "/openapi.yaml", "/llms.txt"};
	for (size_t i = 0; i < 3; i++) {
		const struct asset *a = asset_find(routes[i]);
		ok(a && a->len > 100 && a->content_type, "assets: %s is embedded and not trivially small", routes[i]);
	}
	ok(!asset_find("/index.html") && !asset_find("") && !asset_find("/openapi.yaml/"),
	   "assets: only the exact routes are found");
	const struct asset *page = asset_find("/");
	ok(page && !strncmp(page->content_type, "text/html", 9), "assets: / is HTML");
	ok(page && memmem(page->bytes, page->len, "</html>", 7), "assets: / is the whole page");

	/* FNV-1a 64 known values: "" and "a". */
	char tag[ASSET_ETAG_SIZE];
	struct asset empty = {"/x", "text/plain", (const unsigned char *)"", 0};
	asset_etag(&empty, tag);
	is_str(tag, "\"cbf29ce484222325\"", "etag: FNV-1a of nothing");
	struct asset a1 = {"/x", "text/plain", (const unsigned char *)"a", 1};
	asset_etag(&a1, tag);
	is_str(tag, "\"af63dc4c8601ec8c\"", "etag: FNV-1a of \"a\"");
	char other[ASSET_ETAG_SIZE];
	struct asset b1 = {"/x", "text/plain", (const unsigned char *)"b", 1};
	asset_etag(&b1, other);
	ok(strcmp(tag, other), "etag: different bytes, different tag");

	const char *t = "\"af63dc4c8601ec8c\"";
	ok(etag_matches(t, t), "if-none-match: the same tag");
	ok(etag_matches("*", t), "if-none-match: *");
	ok(etag_matches("W/\"af63dc4c8601ec8c\"", t), "if-none-match: weak form matches");
	ok(etag_matches("\"x\", \"af63dc4c8601ec8c\"", t), "if-none-match: in a list");
	ok(etag_matches(" \"x\" ,\t\"af63dc4c8601ec8c\" ", t), "if-none-match: list with blanks");
	ok(!etag_matches("", t), "if-none-match: absent");
	ok(!etag_matches("\"af63dc4c8601ec8\"", t), "if-none-match: a prefix is not a match");
	ok(!etag_matches("\"af63dc4c8601ec8c0\"", t), "if-none-match: a longer tag is not a match");
	ok(!etag_matches("af63dc4c8601ec8c", t), "if-none-match: unquoted is not a match");
	ok(!etag_matches(",,", t), "if-none-match: only commas");
}
