/*
 * semver.c: npm's version ranges against one version (semver.h).
 *
 * npm rewrites every written comparator into plain ones (<, <=, >, >=, =)
 * on full versions, then a version satisfies a range when it satisfies
 * every plain comparator of one of its ||-alternatives. This does the same
 * rewriting, one comparator at a time, and tests each plain one as it
 * comes: nothing is stored. The rewrites are node-semver's (ranges.js,
 * replaceTilde, replaceCaret, replaceXRange, hyphenReplace): an upper
 * bound such as "<4.0.0-0" keeps 4.0.0's prereleases out of "3.x".
 */
#define _GNU_SOURCE /* strnlen */
#include "semver.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAX_NUMBER (((int64_t)1 << 53) - 1) /* npm: Number.MAX_SAFE_INTEGER */
#define MAX_DIGITS 16                        /* npm: MAX_SAFE_COMPONENT_LENGTH */

/* A full version, or the bound of a plain comparator. */
struct ver {
	int64_t n[3];
	const char *pre; /* prerelease ("rc.1"), not NUL-terminated; NULL: none */
	size_t pre_len;
};

/* A version as a range writes it: its first `parts` numbers are given,
 * the rest are X ("3.x" and "3" have 1, "*" has 0). */
struct partial {
	struct ver v;
	int parts;
	bool loose; /* written after more than one "v" ("=3", "vv3"): npm
		       takes that only where it rewrites the version */
};

enum op { OP_EQ, OP_LT, OP_LE, OP_GT, OP_GE, OP_TILDE, OP_CARET };

/* What one alternative has found so far about the version. */
struct set {
	const struct ver *v;
	bool holds;       /* every plain comparator so far */
	bool pre_allowed; /* one names a prerelease of the version's x.y.z */
	bool any_only;    /* none but "*" (and >=0.0.0, which npm reads as "*") */
	bool overflow;    /* a bound past MAX_NUMBER ("<9007199254740992.0.0-0"):
			     npm refuses the range */
};

/* The text still to read. */
struct scan {
	const char *p, *end;
};

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

static void skip_spaces(struct scan *s)
{
	while (s->p < s->end && is_space(*s->p))
		s->p++;
}

static bool next_is(const struct scan *s, char c)
{
	return s->p < s->end && *s->p == c;
}

/* A number: 0, or digits without a leading 0, at most MAX_NUMBER. */
static bool number(struct scan *s, int64_t *out)
{
	size_t len = 0;
	while (s->p + len < s->end && is_digit(s->p[len]))
		len++;
	if (len == 0 || len > MAX_DIGITS || (len > 1 && s->p[0] == '0'))
		return false;
	int64_t n = 0;
	for (size_t i = 0; i < len; i++)
		n = n * 10 + (s->p[i] - '0');
	if (n > MAX_NUMBER)
		return false;
	s->p += len;
	*out = n;
	return true;
}

/* Dot-separated identifiers of [0-9A-Za-z-]; in a prerelease (strict), a
 * numeric one has no leading 0. */
static bool identifiers(struct scan *s, bool strict)
{
	for (;;) {
		const char *start = s->p;
		bool numeric = true;
		for (; s->p < s->end && is_ident(*s->p); s->p++)
			numeric = numeric && is_digit(*s->p);
		size_t len = (size_t)(s->p - start);
		if (len == 0 || (strict && numeric && len > 1 && *start == '0'))
			return false;
		if (!next_is(s, '.'))
			return true;
		s->p++;
	}
}

/*
 * [v] xr[.xr[.xr[-prerelease][+build]]], xr a number or x, X, *. Parts
 * after an X are read and ignored, as npm does ("3.x.7" is "3.x"); so is
 * the build.
 */
static bool partial(struct scan *s, struct partial *out)
{
	bool x_seen = false;
	*out = (struct partial){0};
	const char *start = s->p;
	while (next_is(s, 'v') || next_is(s, '='))
		s->p++;
	out->loose = s->p - start > 1 || (s->p > start && *start == '=');
	for (int i = 0; i < 3; i++) {
		if (i > 0 && !next_is(s, '.'))
			return true;
		if (i > 0)
			s->p++;
		if (next_is(s, 'x') || next_is(s, 'X') || next_is(s, '*')) {
			s->p++;
			x_seen = true;
		} else if (!number(s, &out->v.n[i])) {
			return false;
		} else if (!x_seen) {
			out->parts = i + 1;
		}
	}
	if (next_is(s, '-')) {
		const char *pre = ++s->p;
		if (!identifiers(s, true))
			return false;
		if (!x_seen) {
			out->v.pre = pre;
			out->v.pre_len = (size_t)(s->p - pre);
		}
	}
	if (next_is(s, '+')) {
		s->p++;
		return identifiers(s, false);
	}
	return true;
}

static bool all_digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(p[i]))
			return false;
	return true;
}

static int sign(long long x)
{
	return (x > 0) - (x < 0);
}

/* One prerelease identifier against another: numbers by value (they have
 * no leading 0: the longer is larger) and below words; words in ASCII. */
static int compare_ident(const char *a, size_t an, const char *b, size_t bn)
{
	bool anum = all_digits(a, an), bnum = all_digits(b, bn);
	if (anum != bnum)
		return anum ? -1 : 1;
	if (anum && an != bn)
		return an < bn ? -1 : 1;
	int c = memcmp(a, b, an < bn ? an : bn);
	return c ? sign(c) : sign((long long)an - (long long)bn);
}

/* Prereleases, identifier by identifier; a longer list is above its prefix. */
static int compare_pre(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0, j = 0;
	while (i < an && j < bn) {
		size_t ie = i, je = j;
		while (ie < an && a[ie] != '.')
			ie++;
		while (je < bn && b[je] != '.')
			je++;
		int c = compare_ident(a + i, ie - i, b + j, je - j);
		if (c)
			return c;
		i = ie + 1;
		j = je + 1;
	}
	return sign((long long)(i < an) - (long long)(j < bn));
}

static int compare(const struct ver *a, const struct ver *b)
{
	for (int i = 0; i < 3; i++)
		if (a->n[i] != b->n[i])
			return a->n[i] < b->n[i] ? -1 : 1;
	if (!a->pre || !b->pre) /* a release is above its prereleases */
		return sign((long long)(a->pre == NULL) - (long long)(b->pre == NULL));
	return compare_pre(a->pre, a->pre_len, b->pre, b->pre_len);
}

/* A plain comparator: op is OP_EQ, OP_LT, OP_LE, OP_GT or OP_GE. */
static void require(struct set *st, enum op op, struct ver bound)
{
	static const int64_t zero[3];
	if (op == OP_GE && !bound.pre && !memcmp(bound.n, zero, sizeof zero))
		return; /* "*" (npm's replaceGTE0) */
	st->any_only = false;
	for (int i = 0; i < 3; i++)
		st->overflow = st->overflow || bound.n[i] > MAX_NUMBER;
	int c = compare(st->v, &bound);
	bool ok = op == OP_LT ? c < 0 : op == OP_LE ? c <= 0 : op == OP_GT ? c > 0 : op == OP_GE ? c >= 0 : c == 0;
	st->holds = st->holds && ok;
	if (bound.pre && !memcmp(bound.n, st->v->n, sizeof bound.n))
		st->pre_allowed = true;
}

/* M.m.p, below all of M.m.p's prereleases with "-0" (npm's upper bounds). */
static struct ver at(int64_t major, int64_t minor, int64_t patch, bool below_pre)
{
	return (struct ver){{major, minor, patch}, below_pre ? "0" : NULL, below_pre ? 1 : 0};
}

/* The lowest version x stands for: itself when whole, else its X as 0. */
static struct ver low(const struct partial *x)
{
	if (x->parts == 3)
		return x->v;
	return at(x->v.n[0], x->parts > 1 ? x->v.n[1] : 0, 0, false);
}

/* Past what x stands for (1 or 2 parts), and past a tilde's range ("~3.11.2":
 * below 3.12.0). */
static struct ver high(const struct partial *x, bool below_pre)
{
	const int64_t *n = x->v.n;
	return x->parts == 1 ? at(n[0] + 1, 0, 0, below_pre) : at(n[0], n[1] + 1, 0, below_pre);
}

/* Past a caret's range: up to the next change of the first non-zero part. */
static struct ver caret_high(const struct partial *x)
{
	const int64_t *n = x->v.n;
	if (x->parts == 1 || n[0] > 0)
		return at(n[0] + 1, 0, 0, true);
	if (x->parts == 2 || n[1] > 0)
		return at(0, n[1] + 1, 0, true);
	return at(0, 0, n[2] + 1, true);
}

/* One written comparator, as npm rewrites it into plain ones; false if
 * npm would refuse it. */
static bool apply(struct set *st, enum op op, const struct partial *x)
{
	bool whole = x->parts == 3;
	if (whole && x->loose && op != OP_TILDE && op != OP_CARET)
		return false; /* "==3.11.2": npm keeps it as written, and refuses it */
	if (x->parts == 0) { /* "*", ">=*", "~x": anything; ">*", "<*": nothing */
		if (op == OP_GT || op == OP_LT)
			require(st, OP_LT, at(0, 0, 0, true));
		return true;
	}
	switch (op) {
	case OP_EQ:
	case OP_TILDE: /* "3.11" is "~3.11"; "3.11.2" is itself */
		if (op == OP_EQ && whole) {
			require(st, OP_EQ, x->v);
			return true;
		}
		require(st, OP_GE, low(x));
		require(st, OP_LT, high(x, true));
		return true;
	case OP_CARET:
		require(st, OP_GE, low(x));
		require(st, OP_LT, caret_high(x));
		return true;
	case OP_GT:
		require(st, whole ? OP_GT : OP_GE, whole ? x->v : high(x, false));
		return true;
	case OP_GE:
		require(st, OP_GE, low(x));
		return true;
	case OP_LT:
		require(st, OP_LT, whole ? x->v : at(low(x).n[0], low(x).n[1], 0, true));
		return true;
	case OP_LE:
		require(st, whole ? OP_LE : OP_LT, whole ? x->v : high(x, true));
		return true;
	}
	return true;
}

/* "A - B": at least A, at most B (with X: below what B's X leave open). */
static bool hyphen(struct set *st, struct scan s)
{
	struct partial from, to;
	if (!partial(&s, &from) || s.p == s.end || !is_space(*s.p))
		return false;
	skip_spaces(&s);
	if (!next_is(&s, '-'))
		return false;
	s.p++;
	if (s.p == s.end || !is_space(*s.p))
		return false;
	skip_spaces(&s);
	if (!partial(&s, &to) || s.p != s.end)
		return false;
	/* As in apply(): npm keeps a whole bound as written, but for the upper
	 * one with a prerelease, which it writes anew. */
	if ((from.parts == 3 && from.loose) || (to.parts == 3 && to.loose && !to.v.pre))
		return false;
	if (from.parts)
		require(st, OP_GE, low(&from));
	if (to.parts)
		require(st, to.parts == 3 ? OP_LE : OP_LT, to.parts == 3 ? to.v : high(&to, true));
	return true;
}

static enum op read_op(struct scan *s)
{
	if (next_is(s, '<') || next_is(s, '>')) {
		bool less = *s->p++ == '<';
		if (next_is(s, '=')) {
			s->p++;
			return less ? OP_LE : OP_GE;
		}
		return less ? OP_LT : OP_GT;
	}
	if (next_is(s, '~')) {
		s->p++;
		if (next_is(s, '>')) /* "~>3.1", Ruby's spelling */
			s->p++;
		return OP_TILDE;
	}
	if (next_is(s, '^') || next_is(s, '=')) {
		bool caret = *s->p++ == '^';
		return caret ? OP_CARET : OP_EQ;
	}
	return OP_EQ;
}

/* Comparators apart by spaces, each an operator (spaces may follow it) and
 * a partial version. False if one does not parse. */
static bool comparators(struct set *st, struct scan s)
{
	for (skip_spaces(&s); s.p < s.end; skip_spaces(&s)) {
		enum op op = read_op(&s);
		struct partial x;
		skip_spaces(&s);
		if (!partial(&s, &x) || (s.p < s.end && !is_space(*s.p)) || !apply(st, op, &x))
			return false;
	}
	return true;
}

/* One ||-alternative: false if it does not parse, else *holds says whether
 * the version satisfies it, and *any whether it is "*". */
static bool alternative(const struct ver *v, const char *p, const char *end, bool *holds, bool *any)
{
	struct scan s = {p, end};
	struct set st = {.v = v, .holds = true, .any_only = true};
	skip_spaces(&s);
	while (s.end > s.p && is_space(s.end[-1]))
		s.end--;
	if ((!hyphen(&st, s) && !comparators(&st, s)) || st.overflow)
		return false;
	/* A prerelease only where the range names one of the same x.y.z. */
	*holds = st.holds && (!v->pre || st.pre_allowed);
	*any = st.any_only;
	return true;
}

/* The installed version: strict semver, or else its leading numbers. */
static bool read_version(const char *text, struct ver *v)
{
	struct scan s = {text, text + strnlen(text, SEMVER_MAX_RANGE)};
	struct partial x;
	if (partial(&s, &x) && x.parts == 3 && s.p == s.end) {
		*v = x.v;
		return true;
	}
	*v = (struct ver){.pre = NULL};
	s.p = text;
	if (next_is(&s, 'v'))
		s.p++;
	for (int i = 0; i < 3; i++) {
		if (i > 0 && !(next_is(&s, '.') && s.p + 1 < s.end && is_digit(s.p[1])))
			break;
		if (i > 0)
			s.p++;
		size_t digits = 0;
		for (; s.p < s.end && is_digit(*s.p); s.p++)
			if (++digits <= MAX_DIGITS)
				v->n[i] = v->n[i] * 10 + (*s.p - '0');
		if (digits == 0 || digits > MAX_DIGITS)
			return false;
	}
	return true;
}

bool semver_satisfies(const char *version, const char *range)
{
	struct ver v;
	size_t len = strnlen(range, SEMVER_MAX_RANGE + 1);
	if (len > SEMVER_MAX_RANGE || !read_version(version, &v))
		return false;
	/* Every alternative must parse, as in npm, where one bad part makes
	 * the whole range invalid. */
	bool holds = false, star = false;
	const char *p = range, *end = range + len;
	for (;;) {
		const char *bar = p;
		while (bar + 1 < end && !(bar[0] == '|' && bar[1] == '|'))
			bar++;
		bool last = bar + 1 >= end, this_holds, this_star;
		if (!alternative(&v, p, last ? end : bar, &this_holds, &this_star))
			return false;
		holds = holds || this_holds;
		star = star || this_star;
		if (last)
			break;
		p = bar + 2;
	}
	/* npm: a range with a "*" alternative is "*", which no prerelease
	 * satisfies ("* || 1.0.0-rc.1" leaves 1.0.0-rc.1 out). */
	return star && v.pre ? false : holds;
}
