#!/usr/bin/env python3
"""Drives Debian's headless chromium (chromium-driver, python3-selenium) against a running `ocrfarm serve`.

    browser_check.py xss STORE            rewrites one page's result so its text holds markup (for the XSS check)
    browser_check.py check CONFIG.json    the browser checks; prints one line per check, exits 1 on the first failure

CONFIG: {"base": URL, "token": admin token, "out": folder for screenshots, "status": the `status --json` object,
"requeue_code": a failure code, "english_page": page id, "chinese_page": page id, "xss_pages": [page ids]}.
"""
import io
import json
import re
import sqlite3
import sys
import time
import urllib.request

XSS = ["<script>alert(1)</script>", "\"><img src=x onerror=alert(2)>"]


def xss(store):
    """The first two words of the first line of clean-001.png's page become the payloads, in the structure the
    viewer draws from and in the page text. Written here as a result row (no OCR reads markup reliably)."""
    db = sqlite3.connect(store)
    page = db.execute("SELECT p.id FROM pages p JOIN documents d ON d.id = p.document_id WHERE d.name = 'clean-001.png'").fetchone()[0]
    text, structure = db.execute("SELECT text, structure FROM results WHERE page_id = ?", (page,)).fetchone()
    data = json.loads(bytes(structure).decode() if isinstance(structure, (bytes, memoryview)) else structure)
    words = data["blocks"][0]["paragraphs"][0]["lines"][0]["words"]
    for word, payload in zip(words, XSS):
        word["text"] = payload
    db.execute("UPDATE results SET text = ?, structure = ? WHERE page_id = ?",
               (" ".join(XSS) + "\n" + text, json.dumps(data).encode(), page))
    db.commit()
    print(page)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def ok(message):
    print("ok: " + message)
    sys.stdout.flush()


def check(config_path):
    from selenium import webdriver
    from selenium.common.exceptions import NoAlertPresentException, TimeoutException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
    from PIL import Image

    config = json.load(open(config_path))
    base = config["base"]
    out = config["out"]

    def api(path):
        with urllib.request.urlopen(base + path) as answer:
            return json.load(answer)

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--force-device-scale-factor=1", "--hide-scrollbars"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    wait = WebDriverWait(driver, 20)

    def no_alert(where):
        try:
            alert = driver.switch_to.alert
            fail(f"{where}: an alert opened: {alert.text!r}")
        except NoAlertPresentException:
            pass

    def csp_errors():
        return [entry["message"] for entry in driver.get_log("browser")
                if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]]

    try:
        # Dashboard: the counts status --json gives.
        driver.get(base + "/#/")
        wait.until(lambda d: d.find_elements(By.ID, "count-total"))
        status = config["status"]
        for state in ["total", "queued", "leased", "done", "failed"]:
            shown = driver.find_element(By.ID, "count-" + state).text
            if shown != str(status["pages"][state]):
                fail(f"dashboard {state}: shows {shown}, status --json says {status['pages'][state]}")
        if driver.find_element(By.ID, "count-documents").text != str(status["documents"]):
            fail("dashboard documents count differs from status --json")
        ok("dashboard counts match status --json: " + json.dumps(status["pages"]))
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#chart-minutes rect"))
        bars = driver.find_elements(By.CSS_SELECTOR, "#chart-minutes rect")
        if len(bars) != 60:
            fail(f"the minute chart has {len(bars)} bars, not 60")
        rows = driver.find_elements(By.CSS_SELECTOR, "#stages-table tr")
        if len(rows) < 2:
            fail("no stage timings shown")
        ok(f"throughput chart of 60 bars, {len(rows) - 1} stage timing rows")
        driver.save_screenshot(out + "/dashboard.png")

        # Requeue by reason from the UI: a dry run first, then the confirmed requeue with the admin token.
        code = config["requeue_code"]
        token = driver.find_element(By.ID, "token")
        token.send_keys(config["token"])
        button = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f"button.requeue[data-code='{code}']"))
        button.click()
        dry = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f"tr[data-code='{code}'] .dry-run"))
        expected = [f["count"] for f in status["failures"] if f["code"] == code][0]
        dry_text = dry.text
        if f"Would requeue {expected} page" not in dry_text:
            fail(f"dry run says {dry_text!r}, expected {expected} pages")
        driver.find_element(By.CSS_SELECTOR, f"tr[data-code='{code}'] button.confirm").click()
        done = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f"tr[data-code='{code}'] .requeued"))
        done_text = done.text
        if f"Requeued {expected} page" not in done_text:
            fail(f"requeue answered {done_text!r}")
        ok(f"requeue of {code} from the UI: {dry_text.strip()} then {done_text.strip()}")

        # Search: an English and a Chinese word, from the pages' own text; the hit for that page is shown with the
        # word highlighted.
        def search_for(page_id, pattern, label):
            text = api(f"/api/pages/{page_id}")["result"]["text"]
            candidates = []
            for match in re.findall(pattern, text):
                if match not in candidates:
                    candidates.append(match)
            for word in candidates:
                found = api("/api/search?q=" + urllib.parse.quote(word))
                if any(hit["page_id"] == page_id for hit in found["hits"]):
                    break
            else:
                fail(f"no {label} word of page {page_id} is found by /api/search: {candidates[:10]}")
            driver.get(base + "/#/documents")
            body = driver.find_element(By.TAG_NAME, "body")
            body.send_keys("/")
            box = driver.switch_to.active_element
            if box.get_attribute("id") != "search-box":
                fail("'/' does not focus the search box")
            box.send_keys(word + Keys.ENTER)
            try:
                hit = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f"#hits .hit[data-page='{page_id}']"))
            except TimeoutException:
                fail(f"search for {word!r} shows no hit for page {page_id}")
            marks = [m.text for m in hit.find_elements(By.TAG_NAME, "mark")]
            if not any(word.lower() in m.lower() or m.lower() in word.lower() for m in marks if m):
                fail(f"the hit for {word!r} highlights {marks}")
            ok(f"search finds the {label} word {word!r} on page {page_id}, highlighted {marks}")

        import urllib.parse
        search_for(config["english_page"], r"[A-Za-z]{6,}", "English")
        search_for(config["chinese_page"], r"[\u4e00-\u9fff]{2}", "Chinese")

        # Page view: the drawn box of a chosen word lies where the page JSON says, scaled to the displayed
        # image, and the screenshot shows ink under it.
        page_id = config["english_page"]
        page = api(f"/api/pages/{page_id}")
        result = page["result"]
        words = [w for b in result["structure"]["blocks"] for p in b["paragraphs"] for l in p["lines"] for w in l["words"]]
        index, word = max(((i, w) for i, w in enumerate(words) if w["confidence"] >= 80 and w["text"].isalpha()),
                          key=lambda item: (len(item[1]["text"]), item[1]["confidence"]))
        driver.get(base + f"/#/page/{page_id}")
        wait.until(lambda d: d.execute_script("const i = document.getElementById('page-image'); return i && i.complete && i.naturalWidth > 0"))
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#overlay .word")) == len(words))
        shape = driver.find_element(By.CSS_SELECTOR, f"#overlay .word[data-index='{index}']")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", shape)
        time.sleep(0.3)
        image_rect = driver.execute_script("return document.getElementById('page-image').getBoundingClientRect().toJSON()")
        box_rect = driver.execute_script("return arguments[0].getBoundingClientRect().toJSON()", shape)
        # The box is in the read image's pixels; the image shown is the original, which the page's transform
        # (a homography; a scale when the page was only downscaled) maps onto.
        m = (page["page"] or {}).get("to_original") or [1, 0, 0, 0, 1, 0, 0, 0, 1]
        size = (page["page"] or {}).get("original_size") if (page["page"] or {}).get("to_original") else [result["width"], result["height"]]
        scale_x = image_rect["width"] / size[0]
        scale_y = image_rect["height"] / size[1]
        x, y, w, h = word["box"]
        corners = []
        for cx, cy in [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]:
            d = m[6] * cx + m[7] * cy + m[8]
            corners.append(((m[0] * cx + m[1] * cy + m[2]) / d, (m[3] * cx + m[4] * cy + m[5]) / d))
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        expected = {"left": image_rect["left"] + min(xs) * scale_x, "top": image_rect["top"] + min(ys) * scale_y,
                    "width": (max(xs) - min(xs)) * scale_x, "height": (max(ys) - min(ys)) * scale_y}
        for key in expected:
            if abs(box_rect[key] - expected[key]) > 1.5:
                fail(f"box of {word['text']!r}: {key} {box_rect[key]:.1f}, expected {expected[key]:.1f} (scale {scale_x:.3f})")
        if abs(scale_x - 1) < 0.01:
            fail("the image is shown at its own size: the test would not see the scaling")
        ok(f"box of {word['text']!r} at {box_rect['left']:.1f},{box_rect['top']:.1f} {box_rect['width']:.1f}x{box_rect['height']:.1f} "
           f"= its JSON box {word['box']} through to_original, scaled by {scale_x:.3f} to the shown image")
        shot = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("L")
        if shot.width != driver.execute_script("return window.innerWidth"):
            fail(f"screenshot width {shot.width} is not the viewport's CSS width")

        def dark_fraction(left, top, right, bottom):
            left, top, right, bottom = (int(round(v)) for v in (left, top, right, bottom))
            if right <= left or bottom <= top:
                return 0.0
            pixels = list(shot.crop((left, top, right, bottom)).getdata())
            return sum(1 for p in pixels if p < 110) / len(pixels)

        l, t = box_rect["left"], box_rect["top"]
        r, b = l + box_rect["width"], t + box_rect["height"]
        inside = dark_fraction(l + 2, t + 2, r - 2, b - 2)
        strip = max(3.0, box_rect["height"] / 3)
        above = dark_fraction(l + 2, t - 2 - strip, r - 2, t - 2)
        below = dark_fraction(l + 2, b + 2, r - 2, b + 2 + strip)
        if not (inside >= 0.08 and inside > 3 * max(above, below, 0.005)):
            fail(f"under the box of {word['text']!r} {inside:.3f} of the pixels are ink, above {above:.3f}, below {below:.3f}")
        ok(f"ink under the box: {inside:.3f} of its pixels dark, {above:.3f} above it, {below:.3f} below it")

        # Hover shows the word and its confidence; a click on the word in the text selects its box and back.
        webdriver.ActionChains(driver).move_to_element(shape).perform()
        tip = wait.until(lambda d: d.find_element(By.ID, "tooltip") if d.find_element(By.ID, "tooltip").is_displayed() else None)
        if word["text"] not in tip.text or "confidence" not in tip.text:
            fail(f"hover shows {tip.text!r}")
        span = driver.find_element(By.CSS_SELECTOR, f"#page-text .w[data-index='{index}']")
        span.click()
        if "selected" not in shape.get_attribute("class"):
            fail("clicking the word in the text does not select its box")
        other = driver.find_element(By.CSS_SELECTOR, "#overlay .word[data-index='0']")
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", other)
        if "selected" not in driver.find_element(By.CSS_SELECTOR, "#page-text .w[data-index='0']").get_attribute("class"):
            fail("clicking a box does not select its word in the text")
        ok(f"hover shows {tip.text!r}; word ↔ box selection both ways")
        driver.execute_script("window.scrollTo(0, 0)")
        webdriver.ActionChains(driver).move_to_element(driver.find_element(By.TAG_NAME, "h2")).perform()
        driver.save_screenshot(out + "/page.png")

        # Keyboard: j goes to the next page of the document when it has one, k back.
        if page["next"]:
            driver.find_element(By.TAG_NAME, "body").send_keys("j")
            wait.until(lambda d: d.current_url.endswith(f"#/page/{page['next']}"))
            ok("j opens the next page")

        # XSS pages: their text is shown as text; no alert, no injected element.
        for xss_page in config["xss_pages"]:
            driver.get(base + f"/#/page/{xss_page}")
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#page-text .w"))
            shown = [s.get_attribute("textContent") for s in driver.find_elements(By.CSS_SELECTOR, "#page-text .w")]
            for payload in XSS:
                if payload not in shown:
                    fail(f"page {xss_page}: {payload!r} is not shown as text (words: {shown[:5]})")
            time.sleep(0.5)
            no_alert(f"page {xss_page}")
            injected = driver.execute_script("return document.querySelectorAll('img[src=\"x\"], script:not([src=\"/ui/app.js\"])').length")
            if injected:
                fail(f"page {xss_page}: {injected} injected element(s)")
            ok(f"page {xss_page} shows {XSS} as text: no alert, no injected element")
        errors = csp_errors()
        if errors:
            fail("the Content-Security-Policy refused something: " + "; ".join(errors))
        ok("no Content-Security-Policy violation in the console")
    finally:
        driver.quit()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "xss":
        xss(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        print(__doc__)
        sys.exit(64)
