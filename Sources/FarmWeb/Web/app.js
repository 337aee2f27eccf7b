// ocrfarm's dashboard and viewer. Every text that comes from the store (page text, words, names, messages) is
// put in the page with textContent or as an attribute value, never as HTML: the page text is whatever a scan said.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const LOW_CONFIDENCE = 60;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  return node;
}

// The admin token lives in sessionStorage (gone when the tab closes) and goes out only as a Bearer header. The
// server never reads cookies, so another site cannot make this browser write (no CSRF).
function token() { return sessionStorage.getItem("ocrfarm-token") || ""; }

async function api(path, options) {
  const init = Object.assign({ headers: {} }, options || {});
  if (token()) init.headers["Authorization"] = "Bearer " + token();
  const response = await fetch(path, init);
  let body = null;
  try { body = await response.json(); } catch (e) { body = null; }
  if (!response.ok) throw new Error((body && body.error) || ("HTTP " + response.status));
  return body;
}

function fmt(number, places) {
  if (number === null || number === undefined) return "–";
  return Number(number).toFixed(places === undefined ? 1 : places);
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  const s = Math.round(seconds);
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}

let poller = null;
let current = null;   // the page view's data, for the keyboard

function view() { return $("view"); }
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

// MARK: Routing: #/, #/documents[/AFTER], #/document/ID, #/page/ID, #/read/PAGE_ID, #/search/QUERY

function route() {
  if (poller) { clearInterval(poller); poller = null; }
  current = null;
  view().classList.remove("reading");
  const hash = location.hash.replace(/^#/, "") || "/";
  const parts = hash.split("/").filter((p) => p.length > 0);
  for (const id of ["nav-dashboard", "nav-documents"]) $(id).classList.remove("current");
  clear(view());
  if (parts.length === 0) { $("nav-dashboard").classList.add("current"); dashboard(); return; }
  if (parts[0] === "documents") { $("nav-documents").classList.add("current"); documents(parts[1] || ""); return; }
  if (parts[0] === "document" && parts[1]) { documentPages(parts[1], parts[2] || ""); return; }
  if (parts[0] === "page" && parts[1]) { pageView(parts[1]); return; }
  if (parts[0] === "read" && parts[1]) { reader(parts[1]); return; }
  if (parts[0] === "search") {
    const query = decodeURIComponent(parts.slice(1).join("/"));
    $("search-box").value = query;
    search(query);
    return;
  }
  view().append(el("p", { class: "error", text: "No such view." }));
}

// MARK: Dashboard

function dashboard() {
  const root = view();
  const counts = el("section", { class: "card", id: "states" }, el("h2", { text: "Pages by state" }), el("div", { class: "counts", id: "counts" }));
  const rates = el("section", { class: "card" }, el("h2", { text: "Throughput" }),
    el("div", { id: "rates", class: "muted" }),
    el("div", { class: "muted", text: "Last hour, pages per minute" }), chartBox("chart-minutes"),
    el("div", { class: "muted", text: "Last day, pages per hour" }), chartBox("chart-hours"));
  const workers = el("section", { class: "card" }, el("h2", { text: "Workers" }), el("div", { id: "workers" }));
  const failures = el("section", { class: "card" }, el("h2", { text: "Failures" }), el("div", { id: "failures" }));
  const stages = el("section", { class: "card" }, el("h2", { text: "Stage timings" }), el("div", { id: "stages" }));
  root.append(el("div", { class: "muted", id: "updated" }), counts, el("div", { class: "grid" }, rates, workers, failures, stages));
  refresh();
  // The server answers /api/status and /api/throughput from a one-second cache, so any number of browsers polling
  // costs the store at most one query of each per second.
  poller = setInterval(refresh, 2000);
}

function chartBox(id) {
  const node = svg("svg", { class: "chart", id: id, viewBox: "0 0 600 120", preserveAspectRatio: "none" });
  return node;
}

async function refresh() {
  let status, throughput;
  try {
    [status, throughput] = await Promise.all([api("/api/status"), api("/api/throughput")]);
  } catch (error) {
    if ($("updated")) $("updated").textContent = "Cannot read the status: " + error.message;
    return;
  }
  if (!$("counts")) return;
  $("updated").textContent = "Updated " + status.generated_at + (status.coordinator_running ? " · coordinator running" : " · no coordinator running");
  const counts = $("counts");
  clear(counts);
  // A worker leases the pages its slots read and a few ahead (its prefetch), so `leased` may pass the slots: the
  // card says how many are being read (at most each live worker's slots) and how many wait in the workers.
  const live = status.workers.filter((w) => w.state !== "gone");
  const reading = Math.min(status.pages.leased, live.reduce((sum, w) => sum + Math.min(w.leased || 0, w.slots), 0));
  for (const state of ["total", "queued", "leased", "done", "failed"]) {
    const card = el("div", { class: "count " + state }, el("b", { id: "count-" + state, text: String(status.pages[state]) }), state);
    if (state === "leased" && status.pages.leased > 0) {
      const ahead = status.pages.leased - reading;
      card.append(el("small", { id: "leased-detail", text: reading + " reading" + (ahead > 0 ? " · " + ahead + " fetched ahead" : ""),
        title: "Each worker holds the pages its slots read and fetches the next ones ahead, so leased may pass the slots" }));
    }
    counts.append(card);
  }
  counts.append(el("div", { class: "count" }, el("b", { id: "count-documents", text: String(status.documents) }), "documents"));

  const t = status.throughput;
  const rates = $("rates");
  clear(rates);
  rates.append("Pages/s: last minute " + fmt(t.last_minute, 3) + " (the workers' rates below add up to it), last 10 min " +
    fmt(t.last_10_minutes, 3) + ", last hour " + fmt(t.last_hour, 3) + ", since the start " + fmt(t.overall, 3) + ". ");
  // The ETA as `ocrfarm status` words it: status gives a number only while a coordinator is live and pages go.
  const remaining = status.pages.queued + status.pages.leased;
  let eta;
  if (status.eta_seconds === 0) eta = "ETA: nothing left to read";
  else if (status.eta_seconds !== null && status.eta_seconds !== undefined) eta = "ETA " + duration(status.eta_seconds) + " (" + remaining + " pages left at " + fmt(t.last_minute, 3) + " pages/s)";
  else if (!status.coordinator_running) eta = "ETA: none, no coordinator is running (" + remaining + " pages wait)";
  else eta = "ETA: unknown (" + remaining + " pages left; no page done in the last minute)";
  rates.append(el("strong", { id: "eta", text: eta }));
  bars($("chart-minutes"), throughput.per_minute, "−60 min", "now");
  bars($("chart-hours"), throughput.per_hour, "−24 h", "now");

  const workers = $("workers");
  clear(workers);
  // As `ocrfarm status` shows them: workers gone for more than 10 minutes are one line (a farm that restarts its
  // workers would list hundreds), and each worker is its host and process, several being on one host.
  const longGone = status.workers.filter((w) => w.state === "gone" && w.seconds_since_seen > 600);
  const listed = status.workers.filter((w) => !longGone.includes(w));
  if (status.workers.length === 0) workers.append(el("p", { class: "muted", text: "No workers have registered." }));
  if (listed.length > 0) {
    const table = el("table", { id: "workers-table" }, el("tr", {}, ...["Worker", "Slots", "Leased", "Pages/s", "Done", "Failed", "Last heard", "State"].map((h) => el("th", { text: h }))));
    for (const w of listed) {
      table.append(el("tr", {}, el("td", { text: w.host + " pid " + w.pid, title: w.id }), el("td", { text: String(w.slots) }),
        el("td", { text: String(w.leased || 0), title: "pages its slots read and pages it fetched ahead" }), el("td", { text: fmt(w.pages_per_second, 3) }),
        el("td", { text: String(w.pages_done) }), el("td", { text: String(w.pages_failed) }),
        el("td", { text: duration(w.seconds_since_seen) + " ago" }), el("td", { class: "state-" + w.state, text: w.state })));
    }
    workers.append(table);
  }
  if (longGone.length > 0) {
    const done = longGone.reduce((sum, w) => sum + w.pages_done, 0);
    const latest = Math.min(...longGone.map((w) => w.seconds_since_seen));
    workers.append(el("p", { class: "muted", id: "workers-gone", text: longGone.length + " gone more than 10 min ago (" + done +
      " pages done between them; the last heard " + duration(latest) + " ago)" }));
  }

  const failures = $("failures");
  if (!failures.dataset.busy) {
    clear(failures);
    if (status.failures.length === 0) failures.append(el("p", { class: "muted", text: "No failed pages." }));
    else {
      const table = el("table", { id: "failures-table" }, el("tr", {}, ...["Reason", "Pages", "Example", ""].map((h) => el("th", { text: h }))));
      for (const f of status.failures) {
        const example = f.example
          ? el("span", {}, el("a", { href: "#/page/" + f.example.page_id, text: f.example.document + " p. " + f.example.page }), " ", el("span", { class: "muted", text: f.example.message || "" }))
          : el("span", { class: "muted", text: "–" });
        const answer = el("span", { class: "requeue-answer" });
        const button = el("button", { class: "requeue", "data-code": f.code, text: "Requeue…" });
        button.addEventListener("click", () => requeueReason(f.code, answer, failures));
        table.append(el("tr", { "data-code": f.code }, el("td", { text: f.code }), el("td", { text: String(f.count) }), el("td", {}, example), el("td", {}, button, answer)));
      }
      failures.append(table);
    }
  }

  const stages = $("stages");
  clear(stages);
  const table = el("table", { id: "stages-table" }, el("tr", {}, ...["Stage", "p50 ms", "p95 ms"].map((h) => el("th", { text: h }))));
  for (const s of status.stage_times.stages) table.append(el("tr", {}, el("td", { text: s.stage }), el("td", { text: fmt(s.p50_ms) }), el("td", { text: fmt(s.p95_ms) })));
  stages.append(table, el("div", { class: "muted", text: "over the last " + status.stage_times.sample + " results" }));
}

// Bars of a count series, oldest first, drawn into an SVG.
function bars(chart, values, left, right) {
  clear(chart);
  const most = Math.max(1, ...values);
  const width = 600 / values.length;
  values.forEach((value, index) => {
    const height = (value / most) * 100;
    const bar = svg("rect", { x: index * width + 1, y: 105 - height, width: Math.max(1, width - 2), height: height });
    const title = svg("title");
    title.textContent = value + " pages";
    bar.append(title);
    chart.append(bar);
  });
  const top = svg("text", { x: 2, y: 10 }); top.textContent = "max " + most;
  const l = svg("text", { x: 2, y: 118 }); l.textContent = left;
  const r = svg("text", { x: 575, y: 118 }); r.textContent = right;
  chart.append(top, l, r);
}

// A requeue by reason: a dry run first shows how many pages it would move, then a confirm button does it.
async function requeueReason(code, answer, failures) {
  clear(answer);
  failures.dataset.busy = "1";
  const done = () => { delete failures.dataset.busy; };
  if (!token()) {
    answer.append(el("span", { class: "error", text: "Enter an admin token above first." }));
    done();
    return;
  }
  try {
    const dry = await api("/api/requeue", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code: code, dry_run: true }) });
    const confirm = el("button", { class: "confirm", text: "Confirm: requeue " + dry.would_requeue + " page(s)" });
    const cancel = el("button", { class: "cancel", text: "Cancel" });
    cancel.addEventListener("click", () => { clear(answer); done(); });
    confirm.addEventListener("click", async () => {
      clear(answer);
      try {
        const result = await api("/api/requeue", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code: code }) });
        answer.append(el("span", { class: "requeued", text: "Requeued " + result.requeued + " page(s)." }));
      } catch (error) {
        answer.append(el("span", { class: "error", text: error.message }));
      }
      setTimeout(() => { done(); refresh(); }, 1500);
    });
    const examples = el("div", { class: "muted examples" }, "e.g. ");
    for (const example of dry.examples.slice(0, 5)) {
      examples.append(el("a", { href: "#/page/" + example.page_id, text: example.document + " p. " + example.page }), " ");
    }
    answer.append(el("span", { class: "dry-run", text: "Would requeue " + dry.would_requeue + " page(s). " }), confirm, " ", cancel, examples);
  } catch (error) {
    answer.append(el("span", { class: "error", text: error.message }));
    done();
  }
}

// MARK: Documents

async function documents(after) {
  const root = view();
  root.append(el("h2", { text: "Documents" }));
  let list;
  try { list = await api("/api/documents?limit=25" + (after ? "&after=" + encodeURIComponent(after) : "")); }
  catch (error) { root.append(el("p", { class: "error", text: error.message })); return; }
  const table = el("table", { id: "documents-table" }, el("tr", {}, ...["", "Document", "Pages", "Done", "Failed", "Progress", "Quality (mean / lowest)", ""].map((h) => el("th", { text: h }))));
  for (const d of list.documents) {
    // The document's first page as a thumbnail, asked for when its row comes into view.
    const thumb = el("td", { class: "thumb-cell", "data-document": String(d.id) });
    firstPageThumbnail(thumb, d.id);
    table.append(el("tr", {}, thumb, el("td", {}, el("a", { href: "#/document/" + d.id, text: d.name })), el("td", { text: String(d.pages.total) }),
      el("td", { text: String(d.pages.done) }), el("td", { text: String(d.pages.failed) }),
      el("td", {}, el("progress", { max: "1", value: String(d.progress) }), " " + Math.round(d.progress * 100) + "%"),
      el("td", { text: d.quality.measured ? fmt(d.quality.mean, 3) + " / " + fmt(d.quality.min, 3) : "–" }),
      el("td", {}, el("a", { class: "read-link", "data-document": String(d.id), href: "#/document/" + d.id, text: "read",
        onclick: (event) => { event.preventDefault(); readDocument(d.id); } }))));
  }
  root.append(uploadZone());
  root.append(el("section", { class: "card" }, table, el("div", { class: "pager" },
    after ? el("a", { href: "#/documents", text: "⇤ first" }) : null,
    list.next !== null ? el("a", { href: "#/documents/" + list.next, id: "documents-next", text: "next →" }) : null)));
}

// Upload by drag and drop (or the file picker), for admins: the files go to POST /api/submit, which stores and
// submits them as `ocrfarm submit` does (duplicates skipped and not kept); the answer lists each file's fate.
function uploadZone() {
  const answer = el("div", { id: "upload-answer", role: "status" });
  const picker = el("input", { id: "upload-files", type: "file", multiple: "multiple" });
  const zone = el("section", { class: "card dropzone", id: "dropzone" },
    el("p", {}, "Drop scans or PDFs here to submit them (admin token), or ", el("label", { for: "upload-files", class: "picker", text: "choose files" }), "."),
    picker, answer);
  const upload = async (files) => {
    clear(answer);
    if (!files.length) return;
    if (!token()) { answer.append(el("p", { class: "error", text: "Enter an admin token above first." })); return; }
    const form = new FormData();
    for (const file of files) form.append("file", file, file.name);
    answer.append(el("p", { class: "muted", id: "upload-busy", text: "Uploading " + files.length + " file(s)…" }));
    let result;
    try { result = await api("/api/submit", { method: "POST", body: form }); }
    catch (error) { clear(answer); answer.append(el("p", { class: "error", id: "upload-error", text: error.message })); return; }
    clear(answer);
    const list = el("ul", { id: "upload-result" });
    for (const d of result.documents) list.append(el("li", { class: "added" }, "Added ", el("a", { href: "#/document/" + d.id, text: d.name }), " (" + d.pages + (d.pages === 1 ? " page" : " pages") + (d.failed_pages ? ", " + d.failed_pages + " failed" : "") + ")"));
    for (const d of result.skipped) list.append(el("li", { class: "skipped", text: "Skipped " + d.file + ": already in the store as " + d.existing }));
    for (const d of result.invalid) list.append(el("li", { class: "error", text: d.file + ": " + d.reason }));
    answer.append(list);
    const added = el("p", {}, el("a", { href: "#/documents", id: "upload-refresh", text: "Show the list again",
      onclick: (event) => { event.preventDefault(); route(); } }));
    answer.append(added);
  };
  picker.addEventListener("change", () => upload(Array.from(picker.files)));
  zone.addEventListener("dragover", (event) => { event.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    upload(Array.from(event.dataTransfer.files));
  });
  return zone;
}

async function documentPages(id, after) {
  const root = view();
  let list;
  try { list = await api("/api/documents/" + encodeURIComponent(id) + "/pages?limit=100" + (after ? "&after=" + encodeURIComponent(after) : "")); }
  catch (error) { root.append(el("p", { class: "error", text: error.message })); return; }
  root.append(el("h2", { id: "document-title", text: documentHeading(list.document, list.document.metadata) }));
  root.append(metadataCard(list.document));
  if (list.pages.length) root.append(el("p", {}, el("a", { id: "read-document", href: "#/read/" + list.pages[0].id, text: "Read page after page →" })));
  const table = el("table", { id: "pages-table" }, el("tr", {}, ...["", "Page", "State", "Confidence", "Quality", "Failure"].map((h) => el("th", { text: h }))));
  for (const p of list.pages) {
    table.append(el("tr", {}, el("td", { class: "thumb-cell" }, thumbnail(p.id)), el("td", {}, el("a", { href: "#/page/" + p.id, text: "page " + p.number })), el("td", { text: p.state }),
      el("td", { text: fmt(p.mean_confidence) }), el("td", { text: fmt(p.quality, 3) }),
      el("td", { text: p.failure ? p.failure.code + ": " + (p.failure.message || "") : "" })));
  }
  root.append(el("section", { class: "card" }, table, el("div", { class: "pager" },
    list.next !== null ? el("a", { href: "#/document/" + id + "/" + list.next, text: "next →" }) : null)));
}

// A document's catalogue fields, editable: Save sends them to POST /api/metadata (an admin token's write); the
// server checks each value and answers the fields as stored, or says which field it refused and why.
const METADATA_FIELDS = [["title", "Title", 500], ["date", "Date (YYYY, YYYY-MM or YYYY-MM-DD)", 40], ["creator", "Creator", 200],
  ["identifier", "Identifier", 100], ["shelfmark", "Shelfmark", 100]];

function documentHeading(d, metadata) {
  const title = metadata && metadata.title;
  return (title ? title + " — " : "") + d.name + " (" + d.page_count + (d.page_count === 1 ? " page)" : " pages)");
}

function metadataCard(documentRecord) {
  const stored = documentRecord.metadata || {};
  const form = el("form", { id: "metadata-form", class: "metadata" });
  const inputs = {};
  for (const [field, label, maxLength] of METADATA_FIELDS) {
    inputs[field] = el("input", { id: "metadata-" + field, name: field, type: "text", maxlength: String(maxLength), value: stored[field] || "",
      placeholder: field === "date" ? "e.g. 1887-03-12" : "" });
    form.append(el("label", { for: "metadata-" + field }, label), inputs[field]);
  }
  const answer = el("span", { id: "metadata-answer", role: "status" });
  form.append(el("span", {}), el("span", {}, el("button", { type: "submit", id: "metadata-save", text: "Save" }), " ", answer));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(answer);
    if (!token()) { answer.append(el("span", { class: "error", text: "Enter an admin token above first." })); return; }
    const body = { document: documentRecord.id };
    for (const [field] of METADATA_FIELDS) body[field] = inputs[field].value;
    try {
      const result = await api("/api/metadata", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      for (const [field] of METADATA_FIELDS) inputs[field].value = result.metadata[field];
      if ($("document-title")) $("document-title").textContent = documentHeading(documentRecord, result.metadata);
      answer.append(el("span", { class: "saved", id: "metadata-saved", text: "Saved." }));
    } catch (error) {
      answer.append(el("span", { class: "error", id: "metadata-error", text: error.message }));
    }
  });
  return el("section", { class: "card", id: "metadata" }, el("h2", { text: "Metadata" }), form);
}

// MARK: Search

async function search(query) {
  const root = view();
  root.append(el("h2", {}, "Search: ", el("span", { id: "search-query", text: query })));
  if (!query.trim()) return;
  let found;
  try { found = await api("/api/search?limit=50&q=" + encodeURIComponent(query)); }
  catch (error) { root.append(el("p", { class: "error", id: "search-error", text: error.message })); return; }
  root.append(el("p", { class: "muted", id: "search-total", text: found.total + " page(s), ranked by " + found.order }));
  if (found.documents.length) {
    root.append(el("p", { id: "search-documents" }, "Documents by name or metadata: ", ...found.documents.map((d) =>
      el("a", { href: "#/document/" + d.id, text: (d.metadata && d.metadata.title ? d.metadata.title + " (" + d.name + ")" : d.name) + " " }))));
  }
  const hits = el("div", { id: "hits" });
  for (const hit of found.hits) {
    const snippet = el("div", { class: "snippet" });
    for (const part of hit.snippet) snippet.append(part.match ? el("mark", { text: part.text }) : document.createTextNode(part.text));
    hits.append(el("div", { class: "hit card", "data-page": String(hit.page_id) },
      el("a", { class: "hit-thumb", href: "#/page/" + hit.page_id }, thumbnail(hit.page_id)),
      el("div", {}, el("a", { href: "#/page/" + hit.page_id, text: hit.document.name + " — page " + hit.page }), snippet)));
  }
  root.append(hits);
}

// MARK: Images that wait out a busy server

// The server makes page images on two threads with four more requests waiting (docs/api.md); past that it answers
// 503 with Retry-After. An image that met it is asked for again after that many seconds (then 2× and 3× it; at
// most IMAGE_RETRIES times: about half a minute), `note` saying "busy" meanwhile; another refusal is named in
// `note`. An image without a note (a thumbnail) is hidden when it cannot be had.
const IMAGE_RETRIES = 6;

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

function retryingImage(image, url, note) {
  let tries = 0;
  image.addEventListener("load", () => { if (note) note.hidden = true; image.classList.remove("unavailable"); });
  image.addEventListener("error", async () => {
    if (!image.isConnected) return;
    // An <img> does not see the status: ask once more to learn it (a 503 costs the server nothing).
    let response = null;
    try { response = await fetch(url, { headers: token() ? { Authorization: "Bearer " + token() } : {} }); } catch (error) { response = null; }
    if (!image.isConnected) return;
    if (response && (response.status === 503 || response.ok) && tries < IMAGE_RETRIES) {
      tries++;
      // Retry-After, then twice and three times it: a queue that is slow to drain is not asked every 2 s.
      const after = Math.min(30, Math.max(1, Number(response.headers.get("Retry-After")) || 2));
      const wait = response.ok ? 0 : after * Math.min(tries, 3);
      if (note && wait > 0) {
        note.id = "image-busy";
        note.className = "muted busy";
        note.textContent = "The image server is busy: trying again in " + wait + " s (" + tries + " of " + IMAGE_RETRIES + ")";
        note.hidden = false;
      }
      image.dataset.retries = String(tries);
      image.classList.add("unavailable");   // no broken-image icon while it waits
      await sleep(wait * 1000);
      if (image.isConnected) image.src = url + (url.includes("?") ? "&" : "?") + "try=" + tries;
      return;
    }
    let reason = "the page image cannot be shown";
    if (response && response.status === 503) reason = "the image server stayed busy after " + tries + " tries; reload to try again";
    else if (response) { try { const body = await response.json(); if (body && body.error) reason = body.error; } catch (error) { /* not JSON */ } }
    image.classList.add("unavailable");
    if (note) {
      note.id = "image-error";
      note.className = "error";
      note.textContent = reason;
      note.hidden = false;
    }
  });
  image.src = url;
}

// A page's thumbnail from the IIIF image service (at most 144 × 192, never enlarged), loaded when it scrolls into view.
function thumbnail(pageId) {
  const image = el("img", { class: "thumb", loading: "lazy", alt: "", "data-page": String(pageId) });
  retryingImage(image, "/iiif/image/" + pageId + "/full/!144,192/0/default.jpg", null);
  return image;
}

// The first page's thumbnail of a document in `cell`, once the cell is in view (the document list has no page ids).
const thumbnailWatcher = "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    thumbnailWatcher.unobserve(entry.target);
    const cell = entry.target;
    api("/api/documents/" + cell.dataset.document + "/pages?limit=1").then((list) => {
      if (list.pages.length && cell.isConnected) cell.append(thumbnail(list.pages[0].id));
    }).catch(() => {});
  }
}, { rootMargin: "200px" }) : null;

function firstPageThumbnail(cell, documentId) {
  cell.dataset.document = String(documentId);
  if (thumbnailWatcher) thumbnailWatcher.observe(cell);
}

// MARK: Page view

// The homography (row-major 3×3) from the read page to the original image.
function mapped(m, x, y) {
  const w = m[6] * x + m[7] * y + m[8];
  return [(m[0] * x + m[1] * y + m[2]) / w, (m[3] * x + m[4] * y + m[5]) / w];
}

function wordsOf(structure) {
  const lines = [];
  for (const block of (structure && structure.blocks) || []) {
    for (const paragraph of block.paragraphs || []) {
      for (const line of paragraph.lines || []) lines.push(line.words || []);
    }
  }
  return lines;
}

async function pageView(id) {
  const root = view();
  let page;
  try { page = await api("/api/pages/" + encodeURIComponent(id)); }
  catch (error) { root.append(el("p", { class: "error", text: error.message })); return; }
  current = { next: page.next ? "#/page/" + page.next : null, previous: page.previous ? "#/page/" + page.previous : null };
  const title = el("h2", {}, el("a", { href: "#/document/" + page.document.id, text: page.document.name || "" }), " — page " + page.number + " (" + page.state + ")");
  const nav = el("div", { class: "nav-pages" },
    page.previous ? el("a", { href: "#/page/" + page.previous, id: "previous-page", text: "← previous (k)" }) : el("span", { class: "muted", text: "first page " }),
    page.next ? el("a", { href: "#/page/" + page.next, id: "next-page", text: "next (j) →" }) : el("span", { class: "muted", text: " last page" }),
    el("a", { href: "#/read/" + page.id, id: "read-from-here", text: "read from here" }));
  const downloads = el("div", { class: "downloads" }, "Download: ");
  for (const name of ["pdf", "text", "hocr", "alto", "page", "json"]) {
    if (page.links[name]) downloads.append(el("a", { href: page.links[name], download: "", text: name === "page" ? "PAGE" : name.toUpperCase() }));
  }
  root.append(title, nav, downloads);
  showPage(root, page);
}

// The reader: a document page after page, each page's image with its word boxes beside its text, paged with the
// arrow keys, PageUp/PageDown, j/k, Home for the first page; the next page's image is fetched while this one is read.
async function reader(id) {
  const root = view();
  let page;
  try { page = await api("/api/pages/" + encodeURIComponent(id)); }
  catch (error) { root.append(el("p", { class: "error", text: error.message })); return; }
  let total = null, first = null;
  try {
    const start = await api("/api/documents/" + page.document.id + "/pages?limit=1");
    total = start.document.page_count;
    first = start.pages.length ? start.pages[0].id : null;
  } catch (error) { total = null; }
  if (location.hash !== "#/read/" + id) return;   // paged on meanwhile
  current = { reader: true, next: page.next ? "#/read/" + page.next : null, previous: page.previous ? "#/read/" + page.previous : null,
              first: first && first !== page.id ? "#/read/" + first : null };
  root.classList.add("reading");
  root.append(el("div", { class: "reader-bar" },
    el("a", { href: "#/document/" + page.document.id, text: page.document.name || "" }),
    el("span", { id: "reader-position", text: " page " + page.number + (total ? " of " + total : "") + " " }),
    page.previous ? el("a", { href: "#/read/" + page.previous, id: "reader-previous", text: "← previous" }) : el("span", { class: "muted", text: "first page" }),
    page.next ? el("a", { href: "#/read/" + page.next, id: "reader-next", text: "next →" }) : el("span", { class: "muted", text: "last page" }),
    el("span", { class: "muted", text: "← → PageUp PageDown j k Home" }),
    el("a", { href: "#/page/" + page.id, text: "page view" })));
  showPage(root, page);
  // The next page's image, so paging on shows it at once (one request; a busy server answers it 503 and no more).
  if (page.next) {
    const ahead = new Image();
    ahead.src = "/api/pages/" + page.next + "/image";
  }
}

// Opens the reader at a document's first page.
async function readDocument(documentId) {
  try {
    const start = await api("/api/documents/" + documentId + "/pages?limit=1");
    if (start.pages.length) location.hash = "#/read/" + start.pages[0].id;
  } catch (error) { location.hash = "#/document/" + documentId; }
}

// A page's image with its word boxes, and its text beside it.
function showPage(root, page) {
  if (page.failure) root.append(el("p", { class: "error", text: page.failure.code + ": " + (page.failure.message || "") }));
  const result = page.result;
  const stage = el("div", { class: "stage" });
  const image = el("img", { id: "page-image", alt: "page " + page.number });
  const overlay = svg("svg", { id: "overlay", preserveAspectRatio: "none" });
  stage.append(image, overlay);
  const text = el("div", { class: "text", id: "page-text" });
  // Why the image is not there yet or at all: the server busy (asked again after its Retry-After), or a refusal
  // (its file moved or changed, a render past its limit), named, not left blank.
  const note = el("p", { class: "muted", id: "image-note" });
  note.hidden = true;
  root.append(note, el("div", { class: "pageview" }, stage, text));
  retryingImage(image, page.links.image, note);
  if (!result) { text.append(el("p", { class: "muted", text: "Not read yet." })); return; }

  // The words' boxes are in the read image's pixels. When the page was a photo straightened by a perspective
  // correction, the image served is the original photo: boxes go through the page's transform to their corners
  // there, and the found page corners are drawn too.
  const transform = page.page && page.page.to_original;
  const size = transform && page.page.original_size ? page.page.original_size : [result.width, result.height];
  overlay.setAttribute("viewBox", "0 0 " + size[0] + " " + size[1]);
  // A photo: the corners the segment stage found (in the original image's pixels) outline the page on it.
  const segment = page.page && page.page.stages && page.page.stages.segment;
  if (transform && segment && segment.full_frame === false && segment.corners) {
    overlay.append(svg("polygon", { class: "corners", id: "page-corners", points: segment.corners.map((c) => c.join(",")).join(" ") }));
  }
  const tooltip = $("tooltip");
  let index = 0;
  const shapes = [];
  const spans = [];
  const select = (i, scroll) => {
    for (const node of overlay.querySelectorAll(".selected")) node.classList.remove("selected");
    for (const node of text.querySelectorAll(".selected")) node.classList.remove("selected");
    shapes[i].classList.add("selected");
    spans[i].classList.add("selected");
    if (scroll === "image") shapes[i].scrollIntoView({ block: "center", inline: "nearest" });
    if (scroll === "text") spans[i].scrollIntoView({ block: "nearest" });
  };
  for (const line of wordsOf(result.structure)) {
    const paragraph = el("p", { class: "line" });
    for (const word of line) {
      const i = index++;
      const [x, y, w, h] = word.box;
      const low = word.confidence < LOW_CONFIDENCE;
      let shape;
      if (transform) {
        const quad = [[x, y], [x + w, y], [x + w, y + h], [x, y + h]].map((c) => mapped(transform, c[0], c[1]));
        shape = svg("polygon", { points: quad.map((c) => c.join(",")).join(" ") });
      } else {
        shape = svg("rect", { x: x, y: y, width: w, height: h });
      }
      shape.setAttribute("class", "word" + (low ? " low" : ""));
      shape.setAttribute("data-index", String(i));
      const span = el("span", { class: "w" + (low ? " low" : ""), "data-index": String(i), text: word.text });
      const alternatives = (word.candidates || []).filter((c) => c.text !== word.text).map((c) => c.text + " (" + fmt(c.confidence) + ")");
      const describe = (event) => {
        tooltip.textContent = word.text + " · confidence " + fmt(word.confidence) + (alternatives.length ? " · alternatives: " + alternatives.join(", ") : "");
        tooltip.hidden = false;
        tooltip.style.left = (event.clientX + 12) + "px";
        tooltip.style.top = (event.clientY + 12) + "px";
      };
      for (const node of [shape, span]) {
        node.addEventListener("mousemove", describe);
        node.addEventListener("mouseleave", () => { tooltip.hidden = true; });
      }
      shape.addEventListener("click", () => select(i, "text"));
      span.addEventListener("click", () => select(i, "image"));
      shapes.push(shape);
      spans.push(span);
      overlay.append(shape);
      paragraph.append(span, " ");
    }
    text.append(paragraph);
  }
  if (index === 0) text.append(el("pre", { text: result.text }));
  text.append(el("p", { class: "muted", text: "Mean confidence " + fmt(result.mean_confidence) + (result.quality !== null ? ", quality " + fmt(result.quality, 3) : "") + " · " + result.engine }));
}


// MARK: Keyboard and start

function typing(event) {
  const target = event.target;
  return target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable);
}

document.addEventListener("keydown", (event) => {
  if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "/") { event.preventDefault(); $("search-box").focus(); $("search-box").select(); return; }
  if (!current) return;
  // The reader also pages with PageDown/PageUp (instead of scrolling) and goes to the first page with Home.
  const next = event.key === "j" || event.key === "ArrowRight" || (current.reader && event.key === "PageDown");
  const previous = event.key === "k" || event.key === "ArrowLeft" || (current.reader && event.key === "PageUp");
  if (next && current.next) { event.preventDefault(); location.hash = current.next; }
  if (previous && current.previous) { event.preventDefault(); location.hash = current.previous; }
  if (current.reader && event.key === "Home" && current.first) { event.preventDefault(); location.hash = current.first; }
});

document.addEventListener("DOMContentLoaded", () => {
  $("token").value = token();
  $("token").addEventListener("input", () => sessionStorage.setItem("ocrfarm-token", $("token").value.trim()));
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = "#/search/" + encodeURIComponent($("search-box").value);
  });
  window.addEventListener("hashchange", route);
  route();
});