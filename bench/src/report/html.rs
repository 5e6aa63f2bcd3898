//! The self-contained HTML report: one file with inline CSS, JavaScript and SVG, no network.
//!
//! Sections: the means table (all 17 metrics, sortable by clicking a header), the charts, the
//! per-repository and per-language tables, the paired comparisons, and a per-instance drill-down
//! (`<details>` per instance, filterable) that puts the ground-truth core regions next to each
//! explorer's predicted regions, marking predictions that overlap a core region. The page works
//! without JavaScript too (sorting and filtering are extras).

use super::chart::{Chart, svg};
use super::render::{KEY_METRICS, LINES_COLUMNS, REAL_METRICS, lines_cells};
use super::{GroupMeans, InstanceView, MeanRow, Report};
use crate::dataset::Region;
use crate::metrics::Metrics;
use std::fmt::Write as _;

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = r#"
body{font-family:"DejaVu Sans",system-ui,sans-serif;margin:24px;color:#1b1b1b;max-width:1400px}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}
th{background:#f3f5f7;cursor:pointer;position:sticky;top:0}
td:first-child,th:first-child,td.l{text-align:left}
tr:nth-child(even) td{background:#fafbfc}
.scroll{overflow-x:auto}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.charts svg{border:1px solid #eee;max-width:100%;height:auto}
details{border:1px solid #ddd;border-radius:4px;margin:6px 0;padding:4px 10px}
summary{cursor:pointer;font-weight:600}
.side{display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start}
.side>div{flex:1;min-width:320px}
.hit{background:#e3f4e8 !important}.miss{background:#fbeaea !important}
.err{color:#b00020}.muted{color:#666;font-size:12px}
input#filter{font-size:14px;padding:4px 8px;width:320px}
"#;

const SCRIPT: &str = r#"
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var body=t.tBodies[0],rows=Array.from(body.rows),asc=th.dataset.asc!=='1';
      rows.sort(function(a,b){
        var x=a.cells[i].textContent,y=b.cells[i].textContent,nx=parseFloat(x),ny=parseFloat(y);
        var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?c:-c;});
      th.dataset.asc=asc?'1':'0';rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
var f=document.getElementById('filter');
if(f){f.addEventListener('input',function(){
  var q=f.value.toLowerCase();
  document.querySelectorAll('details.instance').forEach(function(d){
    d.style.display=d.dataset.search.indexOf(q)>=0?'':'none';});
});}
"#;

fn mean_table(out: &mut String, rows: &[(Option<&str>, &MeanRow)], metrics: &[&str]) {
    out.push_str("<div class=\"scroll\"><table class=\"sortable\"><thead><tr>");
    if rows.iter().any(|(g, _)| g.is_some()) {
        out.push_str("<th>group</th>");
    }
    for h in ["explorer", "k", "n", "failed"] {
        let _ = write!(out, "<th>{h}</th>");
    }
    for m in metrics {
        let _ = write!(out, "<th>{m}</th>");
    }
    for c in LINES_COLUMNS {
        let _ = write!(out, "<th>{c}</th>");
    }
    out.push_str("</tr></thead><tbody>\n");
    for (group, row) in rows {
        out.push_str("<tr>");
        if let Some(group) = group {
            let _ = write!(out, "<td>{}</td>", esc(group));
        }
        let _ = write!(
            out,
            "<td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&row.explorer),
            row.top_k,
            row.instances,
            row.failures
        );
        for m in metrics {
            let _ = write!(
                out,
                "<td>{:.4}</td>",
                row.mean.get(m).expect("known metric")
            );
        }
        for cell in lines_cells(row) {
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

fn group_table(out: &mut String, groups: &[GroupMeans]) {
    let rows: Vec<(Option<&str>, &MeanRow)> = groups
        .iter()
        .flat_map(|g| g.means.iter().map(move |m| (Some(g.group.as_str()), m)))
        .collect();
    mean_table(out, &rows, &KEY_METRICS);
}

fn overlaps(region: &Region, core: &[Region]) -> bool {
    let end = |r: &Region| if r.end == -1 { i64::MAX } else { r.end };
    core.iter().any(|c| {
        c.path == region.path && region.start.max(1) <= end(c) && c.start.max(1) <= end(region)
    })
}

fn region_label(region: &Region) -> String {
    let end = if region.end == -1 {
        "end".to_string()
    } else {
        region.end.to_string()
    };
    format!("{}:{}-{}", region.path, region.start, end)
}

fn instance_section(out: &mut String, view: &InstanceView) {
    let search = format!("{} {} {}", view.instance_id, view.repo, view.language).to_lowercase();
    let _ = write!(
        out,
        "<details class=\"instance\" data-search=\"{}\"><summary>{} <span class=\"muted\">{} · {}</span></summary>\n<div class=\"side\">",
        esc(&search),
        esc(&view.instance_id),
        esc(&view.repo),
        esc(&view.language)
    );
    out.push_str("<div><h4>Ground truth: core regions</h4>");
    if view.core_regions.is_empty() {
        out.push_str("<p class=\"muted\">(not known: pass --bench to show the ground truth)</p>");
    } else {
        out.push_str(
            "<table class=\"gt\"><thead><tr><th>#</th><th>region</th></tr></thead><tbody>",
        );
        for (i, region) in view.core_regions.iter().enumerate() {
            let _ = write!(
                out,
                "<tr><td>{}</td><td class=\"l\">{}</td></tr>",
                i + 1,
                esc(&region_label(region))
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("</div>");
    // The largest k of each explorer holds the smaller cuts as its prefix.
    let mut shown: Vec<&crate::results::ResultRow> = Vec::new();
    for row in &view.rows {
        match shown.iter_mut().find(|r| r.explorer == row.explorer) {
            Some(existing) if existing.top_k < row.top_k => *existing = row,
            Some(_) => {}
            None => shown.push(row),
        }
    }
    for row in shown {
        let _ = write!(
            out,
            "<div><h4>{} <span class=\"muted\">k = {} · recall {:.3} · precision {:.3}</span></h4>",
            esc(&row.explorer),
            row.top_k.unwrap_or(0),
            row.metrics.recall,
            row.metrics.precision
        );
        if let Some(error) = &row.error {
            let _ = write!(out, "<p class=\"err\">failed: {}</p>", esc(error));
        } else if row.regions.is_empty() {
            out.push_str("<p class=\"muted\">(no regions)</p>");
        } else {
            out.push_str(
                "<table class=\"pred\"><thead><tr><th>rank</th><th>predicted region</th><th>core?</th></tr></thead><tbody>",
            );
            for (i, region) in row.regions.iter().enumerate() {
                let (class, mark) = if view.core_regions.is_empty() {
                    ("", "?")
                } else if overlaps(region, &view.core_regions) {
                    ("hit", "yes")
                } else {
                    ("miss", "no")
                };
                let _ = write!(
                    out,
                    "<tr class=\"{class}\"><td>{}</td><td class=\"l\">{}</td><td>{mark}</td></tr>",
                    i + 1,
                    esc(&region_label(region))
                );
            }
            out.push_str("</tbody></table>");
        }
        out.push_str("</div>");
    }
    out.push_str("</div></details>\n");
}

/// The whole page.
pub fn page(report: &Report, charts: &[Chart]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>swex report</title><style>",
    );
    out.push_str(STYLE);
    out.push_str("</style></head><body>\n<h1>swex report</h1>\n");
    let _ = writeln!(
        out,
        "<p class=\"muted\">Results: {}. Means over instances; a failed explorer call counts as 0 and is counted under <em>failed</em>.</p>",
        esc(&report.sources.join(", "))
    );

    out.push_str("<h2 id=\"means\">Means per explorer and k</h2>\n");
    let rows: Vec<(Option<&str>, &MeanRow)> = report.overall.iter().map(|r| (None, r)).collect();
    mean_table(&mut out, &rows, &Metrics::NAMES);

    if report.overall.iter().any(|r| r.real.is_some()) {
        out.push_str(
            "<h2 id=\"real\">Counted with every file's real length</h2>\n<p class=\"muted\">The \
             reference evaluator knows the line counts of ground-truth files only, so a whole-file \
             region on any other file costs it nothing; here every predicted file counts its real \
             length.</p>\n<div class=\"scroll\"><table class=\"sortable\"><thead><tr>",
        );
        for h in ["explorer", "k", "n"]
            .iter()
            .chain(REAL_METRICS.iter())
            .chain(LINES_COLUMNS.iter())
        {
            let _ = write!(out, "<th>{h}</th>");
        }
        out.push_str("</tr></thead><tbody>\n");
        for row in &report.overall {
            let Some(real) = &row.real else { continue };
            let _ = write!(
                out,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td>",
                esc(&row.explorer),
                row.top_k,
                row.instances
            );
            for m in REAL_METRICS {
                let _ = write!(out, "<td>{:.4}</td>", real.get(m).expect("known metric"));
            }
            for cell in lines_cells(row) {
                let _ = write!(out, "<td>{cell}</td>");
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }

    out.push_str("<h2 id=\"charts\">Charts</h2>\n<div class=\"charts\">");
    for chart in charts {
        out.push_str(&svg(chart));
    }
    out.push_str("</div>\n");

    out.push_str("<h2 id=\"repos\">Per repository</h2>\n");
    group_table(&mut out, &report.by_repo);
    out.push_str("<h2 id=\"languages\">Per language</h2>\n");
    group_table(&mut out, &report.by_language);

    if !report.paired.is_empty() {
        out.push_str(
            "<h2 id=\"paired\">Paired comparisons</h2>\n<table class=\"sortable\"><thead><tr>",
        );
        for h in [
            "first",
            "second",
            "k",
            "metric",
            "n",
            "wins",
            "losses",
            "ties",
            "mean diff",
            "CI low",
            "CI high",
        ] {
            let _ = write!(out, "<th>{h}</th>");
        }
        out.push_str("</tr></thead><tbody>");
        for p in &report.paired {
            let _ = write!(
                out,
                "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.4}</td><td>{:+.4}</td><td>{:+.4}</td></tr>",
                esc(&p.a),
                esc(&p.b),
                p.top_k,
                esc(&p.metric),
                p.instances,
                p.wins,
                p.losses,
                p.ties,
                p.mean_difference,
                p.ci_low,
                p.ci_high
            );
        }
        let _ = writeln!(
            out,
            "</tbody></table><p class=\"muted\">Percentile bootstrap ({} resamples, seed {}) of the mean per-instance difference.</p>",
            report.paired[0].resamples, report.paired[0].seed
        );
    }

    let _ = write!(
        out,
        "<h2 id=\"instances\">Instances ({})</h2>\n<p><input id=\"filter\" placeholder=\"filter by id, repository or language\"></p>\n",
        report.instances.len()
    );
    for view in &report.instances {
        instance_section(&mut out, view);
    }
    out.push_str("<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body></html>\n");
    out
}
