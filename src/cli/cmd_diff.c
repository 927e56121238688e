// SPDX-License-Identifier: MIT
/* ember diff: difffolded's three columns, or a red/blue differential flame graph. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/render/diff.h"
#include "ember/core/formats/folded.h"
#include "ember/core/render/flamegraph.h"
#include "ember/core/base/log.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static void diff_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember diff [OPTIONS] A B\n"
		"Compares two folded stack files (A before, B after). Without --flamegraph, writes\n"
		"difffolded.pl's three columns 'stack countA countB' (0 where absent), sorted by stack.\n\n"
		"  -n, --normalize    scale A's counts to B's total: int(a * total(B) / total(A))\n"
		"  -s, --strip-hex    replace hex numbers 0x1f2e with 0x... before comparing\n"
		"      --strict       a malformed line is an error, not a counted skip\n"
		"  -h, --help         this text\n\n"
		"Flame graphs (on stdout: SVG, or HTML for --both):\n"
		"  -f, --flamegraph   red/blue differential flame graph: widths of B, colours of\n"
		"                     B - A (red grew, blue shrank); states the share of A that\n"
		"                     vanished from B (\"X%% elided\")\n"
		"      --negate       swap the hues (flamegraph.pl --negate): `ember diff -f --negate\n"
		"                     B A` draws A's widths coloured by what will happen\n"
		"      --elided       the flame graph of just the elided paths: stacks of A absent\n"
		"                     from B, with A's counts\n"
		"      --both         an HTML page with the pair side by side: A's widths coloured by\n"
		"                     what will happen (diff1) and B's widths coloured by what did\n"
		"                     happen (diff2); hovering a frame highlights it in both\n"
		"      --title TEXT   title of the graph(s)\n"
		"      --width NUM    width of each graph in pixels (1200; --both: 900)\n"
		"      --fg KEY=VALUE any `ember flamegraph` option by its long name, e.g.\n"
		"                     --fg minwidth=0.5 --fg colors=java; repeatable\n");
}

enum diff_mode { DIFF_TEXT = 0, DIFF_FLAMEGRAPH, DIFF_ELIDED, DIFF_BOTH };

struct diff_args {
	bool normalize, strip_hex, strict, negate, has_width;
	enum diff_mode mode;
	const char *a, *b;
	struct flamegraph_opts fg;
};

/* Reads A and B into @ret_a, @ret_b sharing @st. 0 or -errno (logged). */
static int read_pair(const struct diff_args *da, struct strtab *st, struct profile **ret_a,
		     struct profile **ret_b)
{
	struct folded_read_opts opts = {
		.columns = FOLDED_COLUMNS_ONE, /* difffolded: the last number is the count */
		.strict = da->strict,
		.rewrite = da->strip_hex ? folded_strip_hex : NULL,
	};
	struct profile *a = profile__new(st), *b = profile__new(st);
	int err;

	if (!a || !b) {
		err = log_errno(-ENOMEM, "cannot allocate the profiles");
		goto fail;
	}
	err = cli_read_folded(da->a, a, &opts, NULL);
	if (!err)
		err = cli_read_folded(da->b, b, &opts, NULL);
	if (err)
		goto fail;
	*ret_a = a;
	*ret_b = b;
	return 0;
fail:
	profile__free(a);
	profile__free(b);
	return err;
}

static int make_diff(const struct diff_args *da, const struct profile *a, const struct profile *b,
		     struct profile **ret)
{
	struct diff_opts dopts = { .normalize = da->normalize };

	*ret = diff_profiles(a, b, &dopts);
	if (*ret)
		return 0;
	if (errno == EDOM) {
		log_error("cannot normalize: '%s' has no samples", da->a);
		return -EINVAL;
	}
	return log_errno(-errno, "diff failed");
}

static int write_text(const struct profile *d)
{
	struct sbuf sb = SBUF_INIT;
	int err = diff_write(d, &sb);

	if (!err)
		err = sbuf_write_fd(&sb, 1);
	sbuf_fini(&sb);
	if (err)
		log_errno(err, "writing the output failed");
	return err;
}

static int set_info(struct flamegraph_opts *o, const struct sbuf *note)
{
	free(o->info);
	o->info = NULL;
	if (sbuf_error(note))
		return -ENOMEM;
	return flamegraph_opts_set(o, "info", note->buf ? note->buf : "");
}

static int render(const struct profile *p, const struct flamegraph_opts *o, struct sbuf *out)
{
	int err = flamegraph_render(p, o, out);

	if (err == -ENODATA) {
		log_warn("nothing to draw: no samples");
		err = 0;
	}
	if (err)
		log_errno(err, "rendering the flame graph failed");
	return err;
}

/* The SVG of @d (widths of B, colours of B - A), stating the elided share. */
static int render_diff(const struct profile *d, struct diff_args *da, struct sbuf *out)
{
	struct sbuf note = SBUF_INIT;
	int err;

	diff_elided_note(d, &note);
	err = set_info(&da->fg, &note);
	sbuf_fini(&note);
	if (err)
		return log_errno(err, "flame graph options failed");
	da->fg.negate = da->negate;
	return render(d, &da->fg, out);
}

static int render_elided(const struct profile *d, struct diff_args *da, struct sbuf *out)
{
	struct profile *e = diff_elided(d);
	struct sbuf note = SBUF_INIT;
	int err;

	if (!e)
		return log_errno(-ENOMEM, "the elided profile failed");
	sbuf_addf(&note, "elided paths: stacks of A absent from B, %.2f%% of A's samples",
		  100 * diff_elided_share(d));
	err = set_info(&da->fg, &note);
	if (!err && (!da->fg.title || !*da->fg.title))
		err = flamegraph_opts_set(&da->fg, "title", "Elided Flame Graph");
	sbuf_fini(&note);
	if (!err)
		err = render(e, &da->fg, out);
	else
		log_errno(err, "flame graph options failed");
	profile__free(e);
	return err;
}

/* A JavaScript string literal that is safe inside <script>: '<', '>' and '&' as \u escapes. */
static void add_js_string(struct sbuf *sb, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	sbuf_addc(sb, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			sbuf_addc(sb, '\\');
			sbuf_addc(sb, (char)c);
		} else if (c == '\n') {
			sbuf_adds(sb, "\\n");
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
			sbuf_adds(sb, "\\u00");
			sbuf_addc(sb, hex[c >> 4]);
			sbuf_addc(sb, hex[c & 15]);
		} else {
			sbuf_addc(sb, (char)c);
		}
	}
	sbuf_addc(sb, '"');
}

/*
 * The page of --both. Each graph stays a whole SVG document (its own script: zoom, search) in
 * an iframe loaded from a blob: URL. Pages opened from file:// have opaque origins, so the page
 * cannot reach into the frames: a small script is added to each SVG instead, and the frames
 * talk through the page with postMessage. Frames are matched by their path of names from the
 * root ("all;main;a"), recovered from the layout (a frame lies within its parent's span, one
 * level closer to the root) and kept in a data-key attribute.
 */
static const char both_svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n(function(){"
	"var fr=document.getElementById('frames');if(!fr)return;var gs=fr.children,lv={},ys=[],map={};"
	"for(var i=0;i<gs.length;i++){var g=gs[i],r=g.querySelector('rect'),t=g.querySelector('title');"
	"if(!r||!t)continue;var n=t.textContent,k=n.lastIndexOf(' (');if(k>=0)n=n.substring(0,k);"
	"var y=+r.getAttribute('y');if(!(y in lv)){lv[y]=[];ys.push(y);}"
	"lv[y].push({g:g,n:n,x:+r.getAttribute('x'),w:+r.getAttribute('width')});}"
	"var lo0=Math.min.apply(null,ys),hi0=Math.max.apply(null,ys);"
	"var inv=ys.length>1&&lv[lo0].length===1&&lv[hi0].length!==1;"
	"ys.sort(function(a,b){return inv?a-b:b-a;});"
	"for(var l=0;l<ys.length;l++){var cur=lv[ys[l]],par=l?lv[ys[l-1]]:null;"
	"if(par)par.sort(function(a,b){return a.x-b.x;});"
	"for(var j=0;j<cur.length;j++){var f=cur[j],p=null;"
	"if(par){var lo=0,hi=par.length-1;while(lo<hi){var m=(lo+hi+1)>>1;"
	"if(par[m].x<=f.x+0.05)lo=m;else hi=m-1;}p=par[lo];}"
	"f.key=(p?p.key+';':'')+f.n;f.g.setAttribute('data-key',f.key);map[f.key]=f.g;}}"
	"var lit=null;function mark(g,on){var r=g&&g.querySelector('rect');if(!r)return;"
	"if(on){r.setAttribute('stroke','#000');r.setAttribute('stroke-width','2');g.classList.add('linked');}"
	"else{r.removeAttribute('stroke');r.removeAttribute('stroke-width');g.classList.remove('linked');}}"
	"function top(e){var g=e.target;while(g&&g.parentNode!==fr)g=g.parentNode;return g;}"
	"fr.addEventListener('mouseover',function(e){var g=top(e);"
	"if(g)parent.postMessage({fg:'hover',key:g.getAttribute('data-key')},'*');});"
	"fr.addEventListener('mouseout',function(){parent.postMessage({fg:'hover',key:null},'*');});"
	"window.addEventListener('message',function(e){var d=e.data;if(!d||d.fg!=='light')return;"
	"if(lit)mark(lit,false);lit=d.key!==null&&map.hasOwnProperty(d.key)?map[d.key]:null;mark(lit,true);});"
	"parent.postMessage({fg:'ready'},'*');"
	"})();\n]]></script>\n";

static const char both_page_script[] =
	"var ifr=[document.getElementById('g1'),document.getElementById('g2')],ready=0;"
	"window.addEventListener('message',function(e){var d=e.data;if(!d||!d.fg)return;"
	"var i=e.source===ifr[0].contentWindow?0:e.source===ifr[1].contentWindow?1:-1;if(i<0)return;"
	"if(d.fg==='ready')document.body.setAttribute('data-ready',++ready);"
	"else if(d.fg==='hover')ifr[1-i].contentWindow.postMessage({fg:'light',key:d.key},'*');});"
	"for(var i=0;i<2;i++)ifr[i].src=URL.createObjectURL(new Blob([SVG[i]],{type:'image/svg+xml'}));";

/* Inserts the linking script before the closing </svg> of @svg. */
static void add_linked_svg(struct sbuf *out, const struct sbuf *svg)
{
	struct sbuf tmp = SBUF_INIT;
	const char *s = svg->buf ? svg->buf : "";
	const char *end = svg->len >= 6 ? strstr(s + svg->len - 16 > s ? s + svg->len - 16 : s,
						"</svg>") : NULL;
	size_t head = end ? (size_t)(end - s) : svg->len;

	sbuf_add(&tmp, s, head);
	sbuf_adds(&tmp, both_svg_script);
	sbuf_add(&tmp, s + head, svg->len - head);
	if (sbuf_error(&tmp))
		out->err = -ENOMEM;
	add_js_string(out, tmp.buf ? tmp.buf : "", tmp.len);
	sbuf_fini(&tmp);
}

/* The height="N" of the <svg> element of a rendered graph (600 if absent). */
static unsigned int svg_height(const struct sbuf *svg)
{
	const char *s = svg->buf ? strstr(svg->buf, "<svg ") : NULL;
	const char *h = s ? strstr(s, " height=\"") : NULL;

	return h ? (unsigned int)strtoul(h + 9, NULL, 10) : 600;
}

static int render_both(const struct profile *a, const struct profile *b, struct diff_args *da,
		       struct sbuf *out)
{
	struct diff_opts dopts = { .normalize = da->normalize };
	struct profile *d2 = NULL, *d1 = NULL;
	struct sbuf s1 = SBUF_INIT, s2 = SBUF_INIT;
	int err = 0;

	if (!da->has_width)
		da->fg.width = 900;
	/* diff2: widths of B, colours B - A (what did happen) */
	d2 = diff_profiles(a, b, &dopts);
	/* diff1: `difffolded B A | flamegraph.pl --negate`: widths of A, colours B - A */
	d1 = d2 ? diff_profiles(b, a, &dopts) : NULL;
	if (!d1) {
		err = errno == EDOM ? -EINVAL : -ENOMEM;
		if (err == -EINVAL)
			log_error("cannot normalize: a profile has no samples");
		else
			log_errno(err, "diff failed");
		goto out;
	}
	err = render_diff(d2, da, &s2);
	if (!err) {
		struct sbuf note = SBUF_INIT;

		sbuf_addf(&note, "%.2f%% of B is new: share of B's samples on paths absent from A",
			  100 * diff_elided_share(d1));
		err = set_info(&da->fg, &note);
		sbuf_fini(&note);
		da->fg.negate = !da->negate;
		if (!err)
			err = render(d1, &da->fg, &s1);
	}
	if (err)
		goto out;
	sbuf_adds(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>");
	sbuf_add_xml(out, da->fg.title && *da->fg.title ? da->fg.title : "Differential Flame Graphs",
		     strlen(da->fg.title && *da->fg.title ? da->fg.title : "Differential Flame Graphs"));
	sbuf_adds(out, "</title>\n<style>body{margin:0;font-family:Verdana,sans-serif;background:#fff}"
		       ".pair{display:flex;gap:8px;overflow-x:auto}.pair>div{flex:none}"
		       "h2{font-size:13px;font-weight:normal;margin:8px 10px 2px}"
		       "iframe{border:0;display:block}</style>\n</head><body>\n<div class=\"pair\">\n");
	sbuf_addf(out, "<div><h2>diff1: widths of A (before), coloured by what will happen "
		       "(red: grows in B, blue: shrinks)</h2><iframe id=\"g1\" width=\"%u\" "
		       "height=\"%u\" title=\"diff1\"></iframe></div>\n",
		  da->fg.width, svg_height(&s1));
	sbuf_addf(out, "<div><h2>diff2: widths of B (after), coloured by what did happen "
		       "(red: grew, blue: shrank)</h2><iframe id=\"g2\" width=\"%u\" "
		       "height=\"%u\" title=\"diff2\"></iframe></div>\n",
		  da->fg.width, svg_height(&s2));
	sbuf_adds(out, "</div>\n<script>\nvar SVG=[");
	add_linked_svg(out, &s1);
	sbuf_adds(out, ",\n");
	add_linked_svg(out, &s2);
	sbuf_adds(out, "];\n");
	sbuf_adds(out, both_page_script);
	sbuf_adds(out, "\n</script>\n</body></html>\n");
	err = sbuf_error(out);
	if (!err)
		err = sbuf_error(&s1) ? sbuf_error(&s1) : sbuf_error(&s2);
out:
	sbuf_fini(&s1);
	sbuf_fini(&s2);
	profile__free(d1);
	profile__free(d2);
	return err;
}

static int write_out(struct sbuf *sb)
{
	int err = sbuf_write_fd(sb, 1);

	if (err)
		log_errno(err, "writing the output failed");
	return err;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "normalize", no_argument, NULL, 'n' },
		{ "strip-hex", no_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "flamegraph", no_argument, NULL, 'f' },
		{ "negate", no_argument, NULL, 'N' },
		{ "elided", no_argument, NULL, 'E' },
		{ "both", no_argument, NULL, 'B' },
		{ "title", required_argument, NULL, 'T' },
		{ "width", required_argument, NULL, 'W' },
		{ "fg", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct diff_args da = { 0 };
	struct strtab *st = NULL;
	struct profile *a = NULL, *b = NULL, *d = NULL;
	struct sbuf out = SBUF_INIT;
	char *eq;
	int c, err = 0;
	bool unit_set = false;

	flamegraph_opts_init(&da.fg);
	optind = 1;
	while ((c = getopt_long(argc, argv, "nsfh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			da.normalize = true;
			break;
		case 's':
			da.strip_hex = true;
			break;
		case 'S':
			da.strict = true;
			break;
		case 'f':
			if (da.mode == DIFF_TEXT)
				da.mode = DIFF_FLAMEGRAPH;
			break;
		case 'N':
			da.negate = true;
			break;
		case 'E':
			da.mode = DIFF_ELIDED;
			break;
		case 'B':
			da.mode = DIFF_BOTH;
			break;
		case 'T':
			err = flamegraph_opts_set(&da.fg, "title", optarg);
			break;
		case 'W':
			err = flamegraph_opts_set(&da.fg, "width", optarg);
			da.has_width = true;
			break;
		case 'G':
			eq = strchr(optarg, '=');
			if (eq)
				*eq = '\0';
			if (flamegraph_opt_is_file(optarg) || !strcmp(optarg, "negate")) {
				log_error("--fg %s: not available here", optarg);
				err = -EINVAL;
				break;
			}
			err = flamegraph_opts_set(&da.fg, optarg, eq ? eq + 1 : NULL);
			if (!strcmp(optarg, "unit"))
				unit_set = true;
			if (!strcmp(optarg, "width"))
				da.has_width = true;
			if (eq)
				*eq = '=';
			break;
		case 'h':
			diff_usage(stdout);
			goto out;
		default:
			diff_usage(stderr);
			err = -EINVAL;
			goto out;
		}
		if (err) {
			log_error("bad flame graph option '%s'", optarg);
			err = -EINVAL;
			goto out;
		}
	}
	if (argc - optind != 2) {
		log_error("diff needs two files, A and B");
		diff_usage(stderr);
		err = -EINVAL;
		goto out;
	}
	if (da.negate && da.mode == DIFF_TEXT) {
		log_error("--negate applies to --flamegraph");
		err = -EINVAL;
		goto out;
	}
	da.a = argv[optind];
	da.b = argv[optind + 1];
	st = strtab__new();
	if (!st) {
		err = log_errno(-ENOMEM, "cannot allocate the string table");
		goto out;
	}
	err = read_pair(&da, st, &a, &b);
	if (err)
		goto out;
	if (da.mode != DIFF_TEXT && !unit_set && !(da.fg.countname && *da.fg.countname)) {
		uint64_t pa = 0, pb = 0;

		/* both files perf's periods summed: the graphs show CPU time, not "samples" */
		if (folded_guess_unit(a, &pa) == FOLDED_UNIT_NS &&
		    folded_guess_unit(b, &pb) == FOLDED_UNIT_NS) {
			da.fg.counts_ns = true;
			log_info("every count is a multiple of %" PRIu64 " ns (perf's cpu-clock period, "
				 "as `ember collapse` sums them): drawn as CPU time; --fg unit=samples "
				 "if they are samples", pb);
		}
	}
	if (da.mode == DIFF_BOTH) {
		err = render_both(a, b, &da, &out);
		if (!err)
			err = write_out(&out);
		goto out;
	}
	err = make_diff(&da, a, b, &d);
	if (err)
		goto out;
	switch (da.mode) {
	case DIFF_TEXT:
		err = write_text(d);
		goto out;
	case DIFF_FLAMEGRAPH:
		err = render_diff(d, &da, &out);
		break;
	case DIFF_ELIDED:
		err = render_elided(d, &da, &out);
		break;
	case DIFF_BOTH:
		break;
	}
	if (!err)
		err = write_out(&out);
out:
	sbuf_fini(&out);
	flamegraph_opts_fini(&da.fg);
	profile__free(d);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
	return cli_exit_code(err);
}
