// SPDX-License-Identifier: MIT
/* flamegraph output: the SVG (flamegraph.pl's, with our own script) and the frames as TSV, the
 * coordinates of the SVG's rectangles. */
#include "fg_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/base/utf8.h"
#include "ember/core/model/frame.h"

#define FG_FRAMEPAD 1

/* ---- output ---- */

struct fg_geom {
	double fontsize, ypad1, ypad2, ypad3;
	double imageheight;	/* flamegraph.pl's, frames are placed from it */
	double fullheight;	/* plus our note lines */
	unsigned int nlines;	/* note lines below the graph */
};

static double node_y1(const struct fg_ctx *c, const struct fg_geom *g, const struct fg_node *n)
{
	double fh = c->o->height;

	if (!c->o->inverted)
		return g->imageheight - g->ypad2 - (n->depth + 1) * fh + FG_FRAMEPAD;
	return g->ypad1 + n->depth * fh;
}

static double node_y2(const struct fg_ctx *c, const struct fg_geom *g, const struct fg_node *n)
{
	double fh = c->o->height;

	if (!c->o->inverted)
		return g->imageheight - g->ypad2 - n->depth * fh;
	return g->ypad1 + (n->depth + 1) * fh - FG_FRAMEPAD;
}

static double node_etime(const struct fg_ctx *c, const struct fg_node *n)
{
	return n->id == FG_ROOT && n->depth == 0 ? c->timemax : n->etime;
}

/* flamegraph.pl prints x with %0.1f, and the width as %0.1f of the difference of those. */
static void rect_x_w(double x1, double x2, char *xs, size_t xn, char *ws, size_t wn)
{
	char x2s[64];

	snprintf(xs, xn, "%0.1f", x1);
	snprintf(x2s, sizeof(x2s), "%0.1f", x2);
	snprintf(ws, wn, "%0.1f", strtod(x2s, NULL) - strtod(xs, NULL));
}

/* perl's default number format */
static void add_num(struct sbuf *sb, double v)
{
	sbuf_addf(sb, "%.15g", v);
}

/*
 * XML-safe text: & < > (and " in attributes) as entities; characters XML forbids (controls but
 * tab, U+FFFE/F) become '?', and a byte outside valid UTF-8 (a surrogate's too) "\xNN", the one
 * rule of every output (utf8.h).
 */
static void add_xml(struct sbuf *sb, const char *s, size_t len, bool attr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0;

	while (i < len) {
		unsigned char ch = p[i];
		const char *rep = NULL;
		char esc[5];

		if (ch >= 0x80) {
			size_t need = utf8_seq(p + i, len - i);

			if (!need) {
				utf8_escape_byte(esc, ch);
				esc[4] = '\0';
				rep = esc;
			} else if (need == 3 && ch == 0xef && p[i + 1] == 0xbf &&
				   (p[i + 2] == 0xbe || p[i + 2] == 0xbf)) {
				rep = "?"; /* U+FFFE, U+FFFF: valid UTF-8, not XML */
				sbuf_add(sb, s + start, i - start);
				sbuf_adds(sb, rep);
				i += 3;
				start = i;
				continue;
			} else {
				i += need;
				continue;
			}
		} else if (ch == '&') {
			rep = "&amp;";
		} else if (ch == '<') {
			rep = "&lt;";
		} else if (ch == '>') {
			rep = "&gt;";
		} else if (ch == '"' && attr) {
			rep = "&quot;";
		} else if (ch < 0x20 && ch != '\t') {
			rep = "?";
		} else {
			i++;
			continue;
		}
		sbuf_add(sb, s + start, i - start);
		sbuf_adds(sb, rep);
		i++;
		start = i;
	}
	sbuf_add(sb, s + start, i - start);
}

static void add_xmls(struct sbuf *sb, const char *s, bool attr)
{
	add_xml(sb, s, strlen(s), attr);
}

/* A JavaScript string body that is also safe inside CDATA and XML. */
static void add_js(struct sbuf *sb, const char *s)
{
	struct sbuf t = SBUF_INIT;
	size_t i;

	add_xml(&t, s, strlen(s), false); /* validates UTF-8, then we undo the entities */
	sbuf_fini(&t);
	for (i = 0; s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\\' || ch == '"')
			sbuf_addf(sb, "\\%c", ch);
		else if (ch < 0x20 || ch == '<' || ch == '>' || ch == '&' || ch == ']')
			sbuf_addf(sb, "\\u%04x", ch);
		else if (ch >= 0x80)
			sbuf_addf(sb, "\\u%04x", 0xfffd); /* keep non-ASCII out of the way */
		else
			sbuf_addc(sb, (char)ch);
	}
}

static void add_commas(struct sbuf *sb, double v)
{
	char buf[400];
	int n = snprintf(buf, sizeof(buf), "%.0f", v), i, lead;

	if (n <= 0 || n >= (int)sizeof(buf)) {
		sbuf_adds(sb, "?");
		return;
	}
	i = buf[0] == '-' ? 1 : 0;
	sbuf_add(sb, buf, (size_t)i);
	lead = (n - i) % 3;
	if (!lead)
		lead = 3;
	sbuf_add(sb, buf + i, (size_t)lead);
	for (i += lead; i < n; i += 3) {
		sbuf_addc(sb, ',');
		sbuf_add(sb, buf + i, 3);
	}
}

/* flamegraph.pl's s/_\[[kwij]\]$//: the last annotation only, Python's "_[py]" kept */
static size_t strip_annotation(const char *s, size_t len)
{
	enum frame_kind k;

	if (len >= 4 && !memcmp(s + len - 4, FRAME_WAKER_SUFFIX, 4))
		return len - 4;
	k = frame_kind_of(s, len);
	if (k == FRAME_KERNEL || k == FRAME_JIT || k == FRAME_INLINED)
		return len - strlen(frame_kind_suffix(k));
	return len;
}

static const char *opt_or(const char *s, const char *def)
{
	return s && *s ? s : def;
}

/* Nanoseconds as a time with its unit: "1.25 s", "980.00 ms", "12.50 us", "800 ns". */
static void add_time(struct sbuf *sb, double ns)
{
	double a = ns < 0 ? -ns : ns;

	if (a >= 1e9)
		sbuf_addf(sb, "%.2f s", ns / 1e9);
	else if (a >= 1e6)
		sbuf_addf(sb, "%.2f ms", ns / 1e6);
	else if (a >= 1e3)
		sbuf_addf(sb, "%.2f us", ns / 1e3);
	else
		sbuf_addf(sb, "%.0f ns", ns);
}

/* True when the counts are CPU time in ns and no --countname says otherwise. */
static bool time_labels(const struct flamegraph_opts *o)
{
	return o->counts_ns && !(o->countname && *o->countname);
}

/* A count as the labels show it: "1,234 samples" (flamegraph.pl) or "1.25 s" of CPU time. */
static void add_count(struct sbuf *sb, const struct flamegraph_opts *o, double v)
{
	if (time_labels(o)) {
		add_time(sb, v);
		return;
	}
	add_commas(sb, v);
	sbuf_addc(sb, ' ');
	add_xmls(sb, opt_or(o->countname, "samples"), false);
}

static void add_info(struct sbuf *sb, const struct fg_ctx *c, const struct fg_node *n,
		     const char *name, size_t len)
{
	const struct flamegraph_opts *o = c->o;
	double samples, denom = c->timemax * o->factor;
	char sbuf_s[400];

	snprintf(sbuf_s, sizeof(sbuf_s), "%.0f", (node_etime(c, n) - n->stime) * o->factor);
	samples = strtod(sbuf_s, NULL);
	if (n->id == FG_ROOT && n->depth == 0) {
		sbuf_adds(sb, "all (");
		add_count(sb, o, samples);
		sbuf_adds(sb, time_labels(o) ? " of CPU time, 100%)" : ", 100%)");
		return;
	}
	add_xml(sb, name, strip_annotation(name, len), false);
	sbuf_adds(sb, " (");
	add_count(sb, o, samples);
	sbuf_addf(sb, ", %.2f%%", 100 * samples / denom);
	if (c->diff) {
		double d = o->negate ? -n->delta : n->delta;

		sbuf_adds(sb, "; before ");
		if (time_labels(o))
			add_time(sb, n->t1 * o->factor);
		else
			add_commas(sb, n->t1 * o->factor);
		sbuf_addf(sb, ", self %s%.2f%%", d > 0 ? "+" : "", 100 * d / denom);
	}
	sbuf_addc(sb, ')');
}

static void frame_color(struct fg_ctx *c, const struct fg_colorer *col, const struct fg_node *n,
			const char *name, size_t len, struct sbuf *sb)
{
	const struct flamegraph_opts *o = c->o;
	struct fg_rgb rgb;

	if (len == 2 && !memcmp(name, "--", 2)) {
		sbuf_adds(sb, "rgb(160,160,160)");
		return;
	}
	if (len == 1 && name[0] == '-') {
		sbuf_adds(sb, "rgb(200,200,200)");
		return;
	}
	if (c->diff) {
		fg_color_scale(n->delta, c->maxdelta, o->negate, &rgb);
	} else if (o->cp && o->cpmap) {
		const char *v = fg_cpmap_get(o->cpmap, name, len);

		if (v) {
			add_xmls(sb, v, true);
			return;
		}
		fg_color(col, name, len, &rgb);
		{
			char tmp[48];

			snprintf(tmp, sizeof(tmp), "rgb(%d,%d,%d)", rgb.r, rgb.g, rgb.b);
			if (fg_cpmap_set(o->cpmap, name, len, tmp))
				c->err = -ENOMEM;
			sbuf_adds(sb, tmp);
			return;
		}
	} else {
		fg_color(col, name, len, &rgb);
	}
	sbuf_addf(sb, "rgb(%d,%d,%d)", rgb.r, rgb.g, rgb.b);
}

/* My own script (not flamegraph.pl's): hover, zoom, search, URL state. */
static const char fg_script[] =
	"\"use strict\";\n"
	"var details,matchedtxt,searchbtn,icbtn,unzoombtn,frames,svgw,term=null,ic=false,cur=null;\n"
	"function init(evt){details=document.getElementById(\"details\").firstChild;"
	"matchedtxt=document.getElementById(\"matched\");searchbtn=document.getElementById(\"search\");"
	"icbtn=document.getElementById(\"ignorecase\");unzoombtn=document.getElementById(\"unzoom\");"
	"frames=document.getElementById(\"frames\");"
	"svgw=+document.documentElement.getAttribute(\"width\");var p=params();"
	"if(p.x&&p.y){var r=frames.querySelector('rect[x=\"'+p.x+'\"][y=\"'+p.y+'\"]');"
	"if(r)zoom(r.parentNode);}"
	"if(p.s)search(p.s);else if(C.search)search(C.search);}\n"
	"function params(){var o={},a=window.location.search.substring(1).split(\"&\");"
	"for(var i=0;i<a.length;i++){var k=a[i].indexOf(\"=\");if(k<1)continue;"
	"try{o[a[i].substring(0,k)]=decodeURIComponent(a[i].substring(k+1));}catch(e){}}return o;}\n"
	"function setparams(o){var q=[];for(var k in o)q.push(k+\"=\"+encodeURIComponent(o[k]));"
	"try{history.replaceState(null,null,q.length?\"?\"+q.join(\"&\"):window.location.pathname);}"
	"catch(e){}}\n"
	"function group(n){while(n&&n.parentNode){if(n.parentNode===frames)return n;"
	"n=n.parentNode;}return null;}\n"
	"function geom(g){var r=g.querySelector(\"rect\");if(!r.hasAttribute(\"fx\")){"
	"r.setAttribute(\"fx\",r.getAttribute(\"x\"));r.setAttribute(\"fw\",r.getAttribute(\"width\"));}"
	"return{r:r,x:+r.getAttribute(\"fx\"),w:+r.getAttribute(\"fw\"),y:+r.getAttribute(\"y\")};}\n"
	"function title(g){var t=g.querySelector(\"title\");return t?t.textContent:\"\";}\n"
	"function fname(g){var t=title(g),k=t.lastIndexOf(\" (\");t=k<0?t:t.substring(0,k);"
	"return t;}\n"
	"function label(g,a,x,w){var t=g.querySelector(\"text\"),n=Math.floor(w/(C.fs*C.fw)),s=\"\";"
	"if(n>=3){s=fname(g);if(s.length>n)s=s.substring(0,n-2)+\"..\";}"
	"if(!t){if(!s)return;t=document.createElementNS(\"http://www.w3.org/2000/svg\",\"text\");"
	"t.setAttribute(\"y\",(a.y+(+a.r.getAttribute(\"height\"))/2+3).toFixed(1));g.appendChild(t);}"
	"t.setAttribute(\"x\",(x+3).toFixed(2));t.textContent=s;}\n"
	"function place(g,a,x,w){a.r.setAttribute(\"x\",x.toFixed(1));"
	"a.r.setAttribute(\"width\",w.toFixed(1));label(g,a,x,w);}\n"
	"function zoom(node){var z=geom(node),full=svgw-2*C.xpad,f=0.0001,gs=frames.children;"
	"if(z.w>=full-f){unzoom();return;}var ratio=full/z.w;cur=node;"
	"unzoombtn.classList.remove(\"hide\");"
	"for(var i=0;i<gs.length;i++){var g=gs[i],a=geom(g);g.classList.remove(\"parent\",\"hide\");"
	"var rootside=C.inv?a.y<z.y:a.y>z.y;"
	"if(rootside){if(a.x<=z.x+f&&a.x+a.w>=z.x+z.w-f){g.classList.add(\"parent\");"
	"place(g,a,C.xpad,full);}else g.classList.add(\"hide\");}"
	"else if(a.x>=z.x-f&&a.x+a.w<=z.x+z.w+f)place(g,a,C.xpad+(a.x-z.x)*ratio,a.w*ratio);"
	"else g.classList.add(\"hide\");}"
	"var p=params();p.x=z.r.getAttribute(\"fx\");p.y=z.r.getAttribute(\"y\");setparams(p);}\n"
	"function unzoom(){var gs=frames.children;cur=null;unzoombtn.classList.add(\"hide\");"
	"for(var i=0;i<gs.length;i++){var g=gs[i],a=geom(g);g.classList.remove(\"parent\",\"hide\");"
	"place(g,a,a.x,a.w);}var p=params();delete p.x;delete p.y;setparams(p);}\n"
	"function search_prompt(){if(term!==null){reset_search();return;}"
	"var t=prompt(\"Enter a search term (regexp allowed, eg: ^ext4_)\"+"
	"(ic?\", ignoring case\":\"\")+\"\\nPress Ctrl-i to toggle case sensitivity\",\"\");"
	"if(t!=null&&t!==\"\")search(t);}\n"
	"function reset_search(){term=null;var gs=frames.children;for(var i=0;i<gs.length;i++){"
	"var r=gs[i].querySelector(\"rect\");if(r.hasAttribute(\"ff\")){"
	"r.setAttribute(\"fill\",r.getAttribute(\"ff\"));r.removeAttribute(\"ff\");}}"
	"matchedtxt.classList.add(\"hide\");searchbtn.classList.remove(\"show\");"
	"searchbtn.firstChild.nodeValue=\"Search\";var p=params();delete p.s;setparams(p);}\n"
	"function search(t){var re;try{re=new RegExp(t,ic?\"i\":\"\");}catch(e){return;}"
	"reset_search();term=t;var gs=frames.children,m=[],full=svgw-2*C.xpad;"
	"for(var i=0;i<gs.length;i++){var g=gs[i],a=geom(g);if(!re.test(fname(g)))continue;"
	"a.r.setAttribute(\"ff\",a.r.getAttribute(\"fill\"));a.r.setAttribute(\"fill\",C.sc);"
	"m.push(a);}"
	"m.sort(function(p,q){return p.x-q.x||q.w-p.w;});var sum=0,end=-1;"
	"for(var j=0;j<m.length;j++){if(m[j].x>=end-0.0001){sum+=m[j].w;end=m[j].x+m[j].w;}}"
	"var pct=100*sum/full;pct=pct>=99.995?\"100\":pct.toFixed(1);"
	"matchedtxt.classList.remove(\"hide\");matchedtxt.firstChild.nodeValue=\"Matched: \"+pct+\"%\";"
	"searchbtn.classList.add(\"show\");searchbtn.firstChild.nodeValue=\"Reset Search\";"
	"var p=params();p.s=t;setparams(p);}\n"
	"function toggle_ic(){ic=!ic;icbtn.classList.toggle(\"show\",ic);"
	"if(term!==null)search(term);}\n"
	"window.addEventListener(\"click\",function(e){var g=group(e.target);if(g){"
	"if(g.nodeName==\"a\"){if(!e.ctrlKey)return;e.preventDefault();}zoom(g);return;}"
	"var id=e.target.id;if(id==\"unzoom\")unzoom();else if(id==\"search\")search_prompt();"
	"else if(id==\"ignorecase\")toggle_ic();},false);\n"
	"window.addEventListener(\"mouseover\",function(e){var g=group(e.target);"
	"if(g)details.nodeValue=C.nametype+\" \"+title(g);},false);\n"
	"window.addEventListener(\"mouseout\",function(e){if(group(e.target))details.nodeValue=\" \";},"
	"false);\n"
	"window.addEventListener(\"keydown\",function(e){"
	"if(e.keyCode===114||(e.ctrlKey&&e.keyCode===70)){e.preventDefault();search_prompt();}"
	"else if(e.ctrlKey&&e.keyCode===73){e.preventDefault();toggle_ic();}},false);\n";

static void bg_colors(const struct flamegraph_opts *o, const char **c1, const char **c2)
{
	const char *bg = o->bgcolors;

	if (!bg || !*bg) {
		switch (o->colors) {
		case FG_PALETTE_MEM:
			bg = "green";
			break;
		case FG_PALETTE_IO:
		case FG_PALETTE_WAKEUP:
		case FG_PALETTE_CHAIN:
			bg = "blue";
			break;
		case FG_PALETTE_RED:
		case FG_PALETTE_GREEN:
		case FG_PALETTE_BLUE:
		case FG_PALETTE_AQUA:
		case FG_PALETTE_YELLOW:
		case FG_PALETTE_PURPLE:
		case FG_PALETTE_ORANGE:
			bg = "grey";
			break;
		default:
			bg = "yellow";
		}
	}
	if (!strcmp(bg, "blue")) {
		*c1 = "#eeeeee";
		*c2 = "#e0e0ff";
	} else if (!strcmp(bg, "green")) {
		*c1 = "#eef2ee";
		*c2 = "#e0ffe0";
	} else if (!strcmp(bg, "grey")) {
		*c1 = "#f8f8f8";
		*c2 = "#e8e8e8";
	} else if (bg[0] == '#') {
		*c1 = *c2 = bg;
	} else {
		*c1 = "#eeeeee";
		*c2 = "#eeeeb0";
	}
}

static void svg_header(struct sbuf *sb, const struct flamegraph_opts *o, double w, double h)
{
	sbuf_adds(sb, "<?xml version=\"1.0\"");
	if (o->encoding && *o->encoding) {
		sbuf_adds(sb, " encoding=\"");
		add_xmls(sb, o->encoding, true);
		sbuf_addc(sb, '"');
	}
	sbuf_adds(sb, " standalone=\"no\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n");
	sbuf_adds(sb, "<svg version=\"1.1\" width=\"");
	add_num(sb, w);
	sbuf_adds(sb, "\" height=\"");
	add_num(sb, h);
	sbuf_adds(sb, "\" onload=\"init(evt)\" viewBox=\"0 0 ");
	add_num(sb, w);
	sbuf_addc(sb, ' ');
	add_num(sb, h);
	sbuf_adds(sb, "\" xmlns=\"http://www.w3.org/2000/svg\" "
		      "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		      "<!-- Flame graph drawn by ember flamegraph (layout of FlameGraph's "
		      "flamegraph.pl) -->\n");
	if (o->notes && *o->notes) {
		sbuf_adds(sb, "<!-- NOTES: ");
		add_xmls(sb, o->notes, false);
		sbuf_adds(sb, " -->\n");
	}
}

static void text_el(struct sbuf *sb, const char *id, double x, double y, const char *extra,
		    const char *s, size_t len)
{
	sbuf_adds(sb, "<text");
	if (id)
		sbuf_addf(sb, " id=\"%s\"", id);
	sbuf_addf(sb, " x=\"%0.2f\" y=\"", x);
	add_num(sb, y);
	sbuf_addc(sb, '"');
	if (extra)
		sbuf_addf(sb, " %s", extra);
	sbuf_addc(sb, '>');
	add_xml(sb, s, len, false);
	sbuf_adds(sb, "</text>\n");
}

static void note_lines(const struct fg_ctx *c, struct sbuf *lines)
{
	const struct flamegraph_opts *o = c->o;

	if (c->stats.elided) {
		sbuf_addf(lines, "%zu frame%s (%.2f%% of %s) narrower than %g%s not shown",
			  c->stats.elided, c->stats.elided == 1 ? "" : "s",
			  100 * c->stats.elided_samples / c->timemax,
			  time_labels(o) ? "CPU time" : opt_or(o->countname, "samples"), o->minwidth,
			  o->minwidth_pct ? "%" : " px");
	}
	if (o->info && *o->info) {
		if (lines->len)
			sbuf_addc(lines, '\n');
		sbuf_adds(lines, o->info);
	}
}

int fg_render_svg(struct fg_ctx *c, struct sbuf *sb)
{
	const struct flamegraph_opts *o = c->o;
	struct fg_geom g = { .fontsize = o->fontsize };
	struct sbuf lines = SBUF_INIT;
	const char *bg1, *bg2, *title;
	uint64_t rng = o->seed ? o->seed : ((uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15ULL);
	struct fg_colorer col = { .palette = o->colors, .by = o->colorby, .rng = &rng };
	double w = o->width, fs = o->fontsize;
	size_t i, l;

	if (!rng)
		rng = 1;
	g.ypad1 = fs * 3;
	g.ypad2 = fs * 2 + 10;
	g.ypad3 = fs * 2;
	g.imageheight = (c->stats.depth + 1.0) * o->height + g.ypad1 + g.ypad2;
	if (o->subtitle && *o->subtitle)
		g.imageheight += g.ypad3;
	note_lines(c, &lines);
	if (lines.len) {
		g.nlines = 1;
		for (l = 0; l < lines.len; l++)
			g.nlines += lines.buf[l] == '\n';
	}
	g.fullheight = g.imageheight + g.nlines * (fs + 5);
	title = opt_or(o->title, o->flamechart ? "Flame Chart"
				 : o->inverted ? "Icicle Graph"
					       : "Flame Graph");
	if (!(o->title && *o->title) && time_labels(o)) /* the unit in the title too */
		title = o->flamechart ? "Flame Chart (CPU time)"
			: o->inverted ? "Icicle Graph (CPU time)"
				      : "Flame Graph (CPU time)";
	bg_colors(o, &bg1, &bg2);

	svg_header(sb, o, w, g.fullheight);
	sbuf_addf(sb, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		      "<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" "
		      "offset=\"95%%\"/></linearGradient></defs>\n", bg1, bg2);
	sbuf_adds(sb, "<style type=\"text/css\">\ntext{font-family:");
	for (l = 0; o->fonttype && o->fonttype[l]; l++)
		if (!strchr(";{}<>&\\\"'", o->fonttype[l]) && (unsigned char)o->fonttype[l] >= 0x20 &&
		    (unsigned char)o->fonttype[l] < 0x7f)
			sbuf_addc(sb, o->fonttype[l]);
	if (!o->fonttype || !*o->fonttype)
		sbuf_adds(sb, "Verdana");
	sbuf_addf(sb, ";font-size:%gpx;fill:rgb(0,0,0)}\n", fs);
	sbuf_addf(sb, "#search,#ignorecase{opacity:0.1;cursor:pointer}\n"
		      "#search:hover,#search.show,#ignorecase:hover,#ignorecase.show{opacity:1}\n"
		      "#subtitle{text-anchor:middle;fill:rgb(160,160,160)}\n"
		      "#title{text-anchor:middle;font-size:%gpx}\n#unzoom{cursor:pointer}\n"
		      "#frames>*:hover{stroke:black;stroke-width:0.5;cursor:pointer}\n"
		      "#frames rect{rx:2px;ry:2px}\n.hide{display:none}\n.parent{opacity:0.5}\n"
		      "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n",
		  fs + 5);
	sbuf_addf(sb, "var C={xpad:%d,fs:%g,fw:%g,inv:%s,sc:\"rgb(230,0,230)\",nametype:\"",
		  FG_XPAD, fs, o->fontwidth, o->inverted ? "true" : "false");
	add_js(sb, opt_or(o->nametype, "Function:"));
	sbuf_adds(sb, "\",search:\"");
	add_js(sb, o->search ? o->search : "");
	sbuf_adds(sb, "\"};\n");
	sbuf_adds(sb, fg_script);
	sbuf_adds(sb, "]]></script>\n");
	sbuf_adds(sb, "<rect x=\"0.0\" y=\"0\" width=\"");
	add_num(sb, w);
	sbuf_adds(sb, "\" height=\"");
	add_num(sb, g.fullheight);
	sbuf_adds(sb, "\" fill=\"url(#background)\"/>\n");
	text_el(sb, "title", (int)(w / 2), fs * 2, NULL, title, strlen(title));
	if (o->subtitle && *o->subtitle)
		text_el(sb, "subtitle", (int)(w / 2), fs * 4, NULL, o->subtitle,
			strlen(o->subtitle));
	text_el(sb, "details", FG_XPAD, g.imageheight - g.ypad2 / 2, NULL, " ", 1);
	text_el(sb, "unzoom", FG_XPAD, fs * 2, "class=\"hide\"", "Reset Zoom", 10);
	text_el(sb, "search", w - FG_XPAD - 100, fs * 2, NULL, "Search", 6);
	text_el(sb, "ignorecase", w - FG_XPAD - 16, fs * 2, NULL, "ic", 2);
	text_el(sb, "matched", w - FG_XPAD - 100, g.imageheight - g.ypad2 / 2, NULL, " ", 1);
	if (lines.len) {
		const char *s = lines.buf, *nl;
		unsigned int k = 0;

		for (;; k++) {
			nl = strchr(s, '\n');
			text_el(sb, k ? NULL : "elided", FG_XPAD,
				g.imageheight - g.ypad2 / 2 + (k + 1) * (fs + 5), NULL, s,
				nl ? (size_t)(nl - s) : strlen(s));
			if (!nl)
				break;
			s = nl + 1;
		}
	}
	sbuf_fini(&lines);

	sbuf_adds(sb, "<g id=\"frames\">\n");
	for (i = 0; i < c->nnodes; i++) {
		const struct fg_node *n = &c->nodes[i];
		double x1 = FG_XPAD + n->stime * c->widthpertime;
		double x2 = FG_XPAD + node_etime(c, n) * c->widthpertime;
		double y1 = node_y1(c, &g, n), y2 = node_y2(c, &g, n);
		char xs[64], ws[64];
		size_t len, tlen;
		const char *name = fg_frame_name(c, n->id, &len);
		const struct fg_attr *attrs = fg_find_attrs(o, name, len);
		const char *href = fg_attr_get(attrs, "href"),
			   *custom = fg_attr_get(attrs, "title");
		static const char *const gkeys[] = { "id", "class" };
		size_t k, chars;

		if (href) {
			sbuf_adds(sb, "<a xlink:href=\"");
			add_xmls(sb, href, true);
			sbuf_adds(sb, "\" target=\"");
			add_xmls(sb, opt_or(fg_attr_get(attrs, "target"), "_top"), true);
			sbuf_addc(sb, '"');
			if (fg_attr_get(attrs, "a_extra")) {
				sbuf_addc(sb, ' ');
				add_xmls(sb, fg_attr_get(attrs, "a_extra"), false);
			}
		} else {
			sbuf_adds(sb, "<g");
		}
		for (k = 0; k < 2; k++)
			if (fg_attr_get(attrs, gkeys[k])) {
				sbuf_addf(sb, " %s=\"", gkeys[k]);
				add_xmls(sb, fg_attr_get(attrs, gkeys[k]), true);
				sbuf_addc(sb, '"');
			}
		if (fg_attr_get(attrs, "g_extra")) {
			sbuf_addc(sb, ' ');
			add_xmls(sb, fg_attr_get(attrs, "g_extra"), false);
		}
		sbuf_adds(sb, "><title>");
		if (custom)
			add_xmls(sb, custom, false);
		else
			add_info(sb, c, n, name, len);
		rect_x_w(x1, x2, xs, sizeof(xs), ws, sizeof(ws));
		sbuf_addf(sb, "</title><rect x=\"%s\" y=\"", xs);
		add_num(sb, y1);
		sbuf_addf(sb, "\" width=\"%s\" height=\"%0.1f\" fill=\"", ws, y2 - y1);
		frame_color(c, &col, n, name, len, sb);
		sbuf_adds(sb, "\"/>");
		chars = (size_t)((x2 - x1) / (fs * o->fontwidth));
		if (chars >= 3) {
			const char *label = name;

			len = n->id == FG_ROOT ? 0 : strip_annotation(name, len);
			if (n->id == FG_ROOT)
				label = "";
			tlen = fg_utf8_chars(label, len);
			if (tlen > 0) {
				sbuf_addf(sb, "<text x=\"%0.2f\" y=\"", x1 + 3);
				add_num(sb, 3 + (y1 + y2) / 2);
				sbuf_adds(sb, "\">");
				if (chars < tlen) {
					add_xml(sb, label, fg_utf8_prefix(label, len, chars - 2),
						false);
					sbuf_adds(sb, "..");
				} else {
					add_xml(sb, label, len, false);
				}
				sbuf_adds(sb, "</text>");
			}
		}
		sbuf_adds(sb, href ? "</a>\n" : "</g>\n");
	}
	sbuf_adds(sb, "</g>\n</svg>\n");
	if (c->err)
		return c->err;
	return sbuf_error(sb);
}

void fg_error_svg(const struct flamegraph_opts *o, struct sbuf *sb)
{
	double h = o->fontsize * 5;
	static const char msg[] = "ERROR: No valid input provided to ember flamegraph.";

	svg_header(sb, o, o->width, h);
	text_el(sb, NULL, (int)(o->width / 2), o->fontsize * 2, NULL, msg, sizeof(msg) - 1);
	sbuf_adds(sb, "</svg>\n");
}

struct tsv_row {
	double y, x;
	size_t node;
};

static int cmp_row(const void *a, const void *b)
{
	const struct tsv_row *x = a, *y = b;

	if (x->y != y->y)
		return (x->y > y->y) - (x->y < y->y);
	if (x->x != y->x)
		return (x->x > y->x) - (x->x < y->x);
	return (x->node > y->node) - (x->node < y->node);
}

int fg_render_tsv(struct fg_ctx *c, struct sbuf *sb)
{
	const struct flamegraph_opts *o = c->o;
	struct fg_geom g = { .fontsize = o->fontsize };
	struct tsv_row *rows = malloc((c->nnodes ? c->nnodes : 1) * sizeof(*rows));
	size_t i;

	if (!rows)
		return -ENOMEM;
	g.ypad1 = o->fontsize * 3;
	g.ypad2 = o->fontsize * 2 + 10;
	g.imageheight = (c->stats.depth + 1.0) * o->height + g.ypad1 + g.ypad2;
	if (o->subtitle && *o->subtitle)
		g.imageheight += o->fontsize * 2;
	for (i = 0; i < c->nnodes; i++) {
		char xs[64];

		snprintf(xs, sizeof(xs), "%0.1f", FG_XPAD + c->nodes[i].stime * c->widthpertime);
		rows[i] = (struct tsv_row){ node_y1(c, &g, &c->nodes[i]), strtod(xs, NULL), i };
	}
	qsort(rows, c->nnodes, sizeof(*rows), cmp_row);
	for (i = 0; i < c->nnodes; i++) {
		const struct fg_node *n = &c->nodes[rows[i].node];
		char xs[64], ws[64];
		size_t len;
		const char *name = fg_frame_name(c, n->id, &len);

		rect_x_w(FG_XPAD + n->stime * c->widthpertime,
			 FG_XPAD + node_etime(c, n) * c->widthpertime, xs, sizeof(xs), ws,
			 sizeof(ws));
		add_num(sb, rows[i].y);
		sbuf_addf(sb, "\t%s\t%s\t%.0f\t", xs, ws, (node_etime(c, n) - n->stime) * o->factor);
		if (n->id == FG_ROOT && n->depth == 0)
			sbuf_adds(sb, "all");
		else
			sbuf_add(sb, name, strip_annotation(name, len)); /* as in the tooltip */
		sbuf_addc(sb, '\n');
	}
	free(rows);
	return sbuf_error(sb);
}
