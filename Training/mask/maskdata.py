"""Training and test composites for the document mask (issue 39), made from real material in ../shared/corpus.

A composite is a real desk/table background (cut from the real photos of midv500-sample and smartdoc15-sample
outside their documents' corners), other real document images lying around and under the target, the target
document (a real page image, receipt or ID card) under a random perspective, thin occluders across it (cables and
pens, drawn as strokes), then lighting, blur, noise and JPEG changes. The label is the target's whole quadrilateral:
a cable or pen across the sheet does not cut it; sheets under it are not part of it.

Two disjoint pools (`Pools(split)`): "train" and "heldout" share no background photo and no document image, so the
held-out composites measure other backgrounds and other documents than training saw.

`Pools("train", richer=True)` (stop 42, train.py's default) adds, to training composites only: desks made from noise
(wood, fabric, stone, plain dark and light tables; `procedural_desk`) beside the real crops, real crops with their
colour channels swapped, things on the desk that are not sheets (`desk_objects`), and dark photographs and figures
on the target's page and on the other sheets (`with_dark_figures`). The held-out pool never draws them, so the
held-out composites of a seed are the same images as before.

`Pools("train", fills_frame=SHARE)` (stop 44) makes that share of the training composites photos of a page that fills
the frame (`frame_filling_quad`): the frame lies inside the target's quadrilateral or nearly, 0 to 2 of its sides
just inside the frame's edges with a thin strip of desk beyond them, sometimes a book's spread of two pages
(`spread`). The label is the target's quadrilateral as always. The held-out pool never draws them.
"""
import glob
import io
import json
import math
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.environ.get("OCRFARM_CORPUS", os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "corpus")))
REAL = os.path.join(CORPUS, "real")

# midv500-sample document types whose frames give training backgrounds and ID-card images; the others (and every
# smartdoc15 frame, all of one desk, "background01") are held out: their backgrounds are never seen in training.
MIDV_TRAIN_TYPES = ("02", "03", "04", "10", "14", "22")
MIDV_HELDOUT_TYPES = ("26", "31")


def frame_quad(json_path):
    with open(json_path) as f:
        truth = json.load(f)
    return [tuple(map(float, p)) for p in truth["corners"]], truth["width"], truth["height"]


def perspective_coeffs(dst, src):
    """PIL's PERSPECTIVE data mapping output points `dst` to input points `src` (4 pairs)."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(dst, src):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y]); rhs.append(u)
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y]); rhs.append(v)
    return np.linalg.solve(np.array(rows, float), np.array(rhs, float)).tolist()


def rectified(image, quad, size):
    """The quadrilateral `quad` (tl, tr, br, bl) of `image` warped to a `size` rectangle."""
    w, h = size
    return image.transform(size, Image.PERSPECTIVE, perspective_coeffs([(0, 0), (w, 0), (w, h), (0, h)], quad),
                           Image.BICUBIC)


def opened(path, long_side):
    """The image at `path` in RGB, a JPEG decoded at the smallest DCT scale that keeps `long_side` (fast)."""
    image = Image.open(path)
    if image.format == "JPEG":
        scale = long_side / max(image.size)
        image.draft("RGB", (math.ceil(image.width * scale), math.ceil(image.height * scale)))
    return image.convert("RGB")


def shrunk(image, long_side):
    scale = long_side / max(image.size)
    if scale < 1:
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.LANCZOS)
    return image


class Background:
    """A real photo with its document's quadrilateral blanked out of the places crops may come from."""

    def __init__(self, path, quad, width, height, long_side=640):
        image = opened(path, long_side)
        scale = long_side / max(image.size)
        quad = [(x * image.width / width, y * image.height / height) for x, y in quad]
        self.image = image.resize((round(image.width * scale), round(image.height * scale)), Image.LANCZOS)
        # Everything of the document and a margin around it (its shadow, GT slack) is forbidden.
        mask = Image.new("L", self.image.size, 0)
        self.quad = [(x * scale, y * scale) for x, y in quad]
        ImageDraw.Draw(mask).polygon(self.quad, fill=255)
        mask = mask.filter(ImageFilter.MaxFilter(9))
        self.forbidden = np.asarray(mask) > 0
        self.integral = np.pad(self.forbidden.astype(np.int64).cumsum(0).cumsum(1), ((1, 0), (1, 0)))

    def crop(self, rng, aspect):
        """A crop of about `aspect` (w/h) that holds none of the document, or None."""
        W, H = self.image.size
        for _ in range(40):
            frac = rng.uniform(0.25, 0.8)
            h = int(H * frac) if aspect < W / H else int(W * frac / aspect)
            w = int(h * aspect)
            if w < 24 or h < 24 or w > W or h > H:
                continue
            x = int(rng.integers(0, W - w + 1)); y = int(rng.integers(0, H - h + 1))
            bad = self.integral[y + h, x + w] - self.integral[y, x + w] - self.integral[y + h, x] + self.integral[y, x]
            if bad == 0:
                return self.image.crop((x, y, x + w, y + h))
        return None


class Pools:
    """Backgrounds, target documents and distractor documents of one split ("train" or "heldout")."""

    def __init__(self, split, doc_long_side=420, limit=None, richer=False, pale_edge=0.0, fills_frame=0.0):
        """`limit`: at most that many background photos and page files (a quick, tiny configuration); `richer`: the
        stop-42 additions (training only: the held-out pool stays as it was); `pale_edge`: the share of composites
        with a pale surface cut by the frame's edge under everything (`pale_edge_surface`, stop 43; not held out);
        `fills_frame`: the share of composites whose target fills the frame (`frame_filling_quad`, stop 44; not held
        out)."""
        assert split in ("train", "heldout")
        assert not (richer and split == "heldout"), "the held-out composites stay as they were"
        assert not (pale_edge and split == "heldout"), "the held-out composites stay as they were"
        assert not (fills_frame and split == "heldout"), "the held-out composites stay as they were"
        self.limit = limit
        self.split = split
        self.richer = richer
        self.pale_edge = pale_edge
        self.fills_frame = fills_frame
        midv = sorted(glob.glob(os.path.join(REAL, "midv500-sample", "*.jpg")))
        types = MIDV_TRAIN_TYPES if split == "train" else MIDV_HELDOUT_TYPES
        bg_frames = [p for p in midv if p.split("_")[-2] in types]
        if split == "heldout":
            bg_frames += sorted(glob.glob(os.path.join(REAL, "smartdoc15-sample", "*.jpeg")))
        bg_frames = bg_frames[:limit]
        self.backgrounds = []
        self.cards = []
        for path in bg_frames:
            quad, w, h = frame_quad(os.path.splitext(path)[0] + ".json")
            background = Background(path, quad, w, h)
            self.backgrounds.append(background)
            if "midv500" in path:
                # The ID card itself, rectified, is a real document image too (ID-1 is 85.6 x 54 mm).
                quad = background.quad
                side = math.dist(quad[0], quad[1]); other = math.dist(quad[1], quad[2])
                size = (340, 214) if side >= other else (214, 340)
                self.cards.append(rectified(background.image, quad, size))
        pages = self._pages(doc_long_side)
        self.pages = pages
        self.documents = pages + self.cards * max(1, len(pages) // (3 * max(1, len(self.cards))))
        if not self.backgrounds or not self.documents:
            raise SystemExit(f"maskdata: no {split} material under {REAL}")

    def photos(self):
        """Real photo material for dark figures: the background photos (the desks, the scenes) of this pool."""
        return [b.image for b in self.backgrounds]

    def _pages(self, long_side):
        def every(pattern, keep):
            files = sorted(glob.glob(os.path.join(REAL, pattern)))
            return [f for i, f in enumerate(files) if keep(i)]
        # Three of every four files train, the fourth is held out: disjoint files.
        keep = (lambda i: i % 4 != 3) if self.split == "train" else (lambda i: i % 4 == 3)
        files = (every("docbank-sample/*.jpg", keep) + every("sroie-receipts-sample/*.jpg", keep)
                 + every("pubtabnet-sample/*.png", keep) + every("../synthetic/scan/*.png", keep)
                 + every("../synthetic/clean/*.png", keep) + every("../synthetic/cjk/*.png", keep)
                 + every("phone-scan-ru-sample/scan/*.jpg", keep))
        pages = []
        for f in files[:self.limit]:
            try:
                pages.append(shrunk(opened(f, long_side), long_side))
            except OSError as error:
                print(f"maskdata: {f}: skipped, {error}")
        return pages


def noise(rng, h, w, cells, octaves=3):
    """Smooth value noise in about [-1, 1]: random grids of `cells`, 2x, 4x... cells upsampled and summed."""
    total = np.zeros((h, w), np.float32)
    weight = 1.0
    for o in range(octaves):
        n = max(2, int(cells * 2 ** o))
        grid = rng.normal(0, 1, (n, n)).astype(np.float32)
        total += weight * np.asarray(Image.fromarray(grid, "F").resize((w, h), Image.BICUBIC))
        weight *= 0.5
    return total / 1.75


def desk_colour(rng):
    """A table's colour: dark, light, wood-brown, grey or any hue, RGB in [0, 255]."""
    kind = rng.random()
    if kind < 0.3:
        base = rng.uniform(15, 80) * rng.uniform(0.8, 1.2, 3)  # dark
    elif kind < 0.55:
        base = rng.uniform(150, 240) * rng.uniform(0.9, 1.05, 3)  # light (white tables, close to paper)
    elif kind < 0.8:
        base = rng.uniform(60, 200) * np.array([1.0, rng.uniform(0.6, 0.8), rng.uniform(0.35, 0.6)])  # wood
    else:
        base = rng.uniform(30, 220, 3)  # any colour
    return base.astype(np.float32)


def procedural_desk(rng, w, h):
    """A desk surface from noise: wood grain (with planks), fabric, stone/laminate speckle or a plain table."""
    base = desk_colour(rng)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    kind = rng.choice(["wood", "fabric", "stone", "plain"], p=[0.35, 0.2, 0.2, 0.25])
    if kind == "wood":
        angle = rng.uniform(0, math.pi)
        u = xx * math.cos(angle) + yy * math.sin(angle); v = -xx * math.sin(angle) + yy * math.cos(angle)
        period = rng.uniform(3, 14) * max(w, h) / 320
        warp = noise(rng, h, w, rng.uniform(1.5, 4)) * rng.uniform(4, 20) * max(w, h) / 320
        grain = np.sin(2 * math.pi * (v + warp) / period) * 0.5 + 0.5 * noise(rng, h, w, 24, 2)
        tone = 1 + rng.uniform(0.04, 0.15) * grain
        plank = rng.uniform(0.15, 0.5) * max(w, h)
        index = np.floor(v / plank + rng.uniform(0, 1))
        tone = tone * (1 + 0.08 * np.sin(index * 12.9898) * rng.uniform(0.3, 1))
        seam = np.abs((v / plank + 10) % 1 - 0.5) > 0.497 - 0.003 * rng.uniform(0, 1)
        tone = np.where(seam & (rng.random() < 0.6), tone * 0.6, tone)
    elif kind == "fabric":
        period = rng.uniform(2, 6) * max(w, h) / 320
        weave = np.sin(2 * math.pi * xx / period) * np.sin(2 * math.pi * yy / period)
        tone = 1 + rng.uniform(0.03, 0.12) * weave + 0.06 * noise(rng, h, w, 40, 2) + 0.05 * noise(rng, h, w, 3)
    elif kind == "stone":
        speck = noise(rng, h, w, rng.uniform(40, 120), 2)
        tone = 1 + rng.uniform(0.05, 0.25) * speck + 0.08 * noise(rng, h, w, 4)
    else:
        tone = 1 + rng.uniform(0.01, 0.06) * noise(rng, h, w, rng.uniform(1, 4)) + 0.01 * rng.normal(0, 1, (h, w))
    a = base[None, None, :] * tone[..., None]
    if rng.random() < 0.5:  # a lamp or a window: a broad bright patch, and a gradient
        cx, cy = rng.uniform(-0.3, 1.3) * w, rng.uniform(-0.3, 1.3) * h
        r = rng.uniform(0.3, 1.0) * max(w, h)
        a = a * (1 + rng.uniform(0.1, 0.6) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (r * r)))[..., None]
    return Image.fromarray(a.clip(0, 255).astype(np.uint8))


def desk_objects(canvas, rng):
    """Things on the desk that are not sheets: round and soft shapes (a mug, a plate, a phone, a bag), some light."""
    cw, ch = canvas.size
    draw = ImageDraw.Draw(canvas)
    for _ in range(int(rng.choice([0, 0, 1, 1, 2, 3]))):
        colour = tuple(int(v) for v in (rng.uniform(170, 250) * rng.uniform(0.9, 1.05, 3) if rng.random() < 0.4
                                        else rng.integers(0, 256, 3)))
        x, y = rng.uniform(-0.1, 1.1) * cw, rng.uniform(-0.1, 1.1) * ch
        rx, ry = rng.uniform(0.04, 0.25) * cw, rng.uniform(0.04, 0.25) * ch
        if rng.random() < 0.6:
            draw.ellipse([x - rx, y - ry, x + rx, y + ry], fill=colour)
        else:  # a rounded slab (a phone, a keyboard, a book's cover): rounded corners, no sheet edge
            draw.rounded_rectangle([x - rx, y - ry, x + rx, y + ry], radius=int(0.4 * min(rx, ry)), fill=colour)


def with_dark_figures(doc, rng, photos):
    """`doc` with 1-3 dark photographs or figures on it (real photo crops darkened, near-black blocks, dark
    noise), some reaching the page's edge as a magazine's do: a dark area inside a sheet is still the sheet."""
    doc = doc.copy()
    w, h = doc.size
    for _ in range(int(rng.integers(1, 4))):
        fw = int(w * rng.uniform(0.2, 0.9)); fh = int(h * rng.uniform(0.12, 0.5))
        x = int(rng.integers(0, max(1, w - fw + 1))); y = int(rng.integers(0, max(1, h - fh + 1)))
        if rng.random() < 0.3:  # bleeding to the page's edge
            x = 0 if rng.random() < 0.5 else w - fw
        kind = rng.random()
        if kind < 0.5 and photos:
            source = photos[int(rng.integers(0, len(photos)))]
            sw, sh = source.size
            cw_, ch_ = int(sw * rng.uniform(0.3, 0.8)), int(sh * rng.uniform(0.3, 0.8))
            sx = int(rng.integers(0, sw - cw_ + 1)); sy = int(rng.integers(0, sh - ch_ + 1))
            patch = np.asarray(source.crop((sx, sy, sx + cw_, sy + ch_)).resize((fw, fh), Image.BILINEAR), np.float32)
            patch = patch * rng.uniform(0.15, 0.7)
        elif kind < 0.75:
            patch = np.full((fh, fw, 3), rng.uniform(0, 50, 3), np.float32)
        else:
            patch = np.asarray(procedural_desk(rng, fw, fh), np.float32) * rng.uniform(0.2, 0.6)
        doc.paste(Image.fromarray(patch.clip(0, 255).astype(np.uint8)), (x, y))
    return doc


def pale_edge_surface(canvas, rng, pools):
    """A pale surface cut by the frame's edge (stop 43): another light table's strip along one side of the frame,
    its inner border a straight table edge (sometimes a table's corner), or a large pale sheet (blank paper or a page)
    lying partly out of frame. Drawn under everything else: it is not the document."""
    cw, ch = canvas.size
    if rng.random() < 0.5:
        side = int(rng.integers(0, 4))
        span = cw if side in (0, 2) else ch   # the strip's depth is across this dimension
        length = ch if side in (0, 2) else cw
        d0, d1 = span * rng.uniform(0.06, 0.35), span * rng.uniform(0.06, 0.35)
        start = -5 if rng.random() < 0.7 else rng.uniform(0.2, 0.7) * length  # a table's corner in the frame
        # (depth, along) with depth 0 on the frame's side
        local = [(-5, start), (d0, start), (d1, length + 5), (-5, length + 5)]
        if side == 0:
            poly = [(d, a) for d, a in local]
        elif side == 1:
            poly = [(a, d) for d, a in local]
        elif side == 2:
            poly = [(cw - d, a) for d, a in local]
        else:
            poly = [(a, ch - d) for d, a in local]
        base = rng.uniform(165, 245) * rng.uniform(0.92, 1.04, 3)
        tone = 1 + rng.uniform(0.01, 0.05) * noise(rng, ch, cw, rng.uniform(1, 4)) + 0.01 * rng.normal(0, 1, (ch, cw))
        surface = Image.fromarray((base[None, None, :] * tone[..., None]).clip(0, 255).astype(np.uint8))
        cover = Image.new("L", (cw, ch), 0)
        ImageDraw.Draw(cover).polygon(poly, fill=255)
        if rng.random() < 0.5:  # the table's edge: a darker rim
            ImageDraw.Draw(canvas).line(poly[1:3], fill=tuple(int(v * 0.5) for v in base),
                                        width=max(1, int(rng.uniform(1, 5) * max(cw, ch) / 640)))
        canvas.paste(surface, (0, 0), cover.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 2))))
        return
    if rng.random() < 0.6:
        tone = rng.uniform(200, 250) * rng.uniform(0.94, 1.03, 3)
        sheet = Image.new("RGB", (420, int(420 * rng.choice([1.414, 1 / 1.414, 1.3, 1 / 1.3]))), tuple(int(v) for v in tone))
    else:
        sheet = pools.documents[int(rng.integers(0, len(pools.documents)))]
    quad = random_quad(rng, cw, ch, sheet.width / sheet.height, partial=True)
    centre = np.mean(quad, 0)
    side = int(rng.integers(0, 4))  # its middle near one of the frame's sides: it is cut by the frame
    target = [(rng.uniform(-0.1, 0.12) * cw, centre[1]), (centre[0], rng.uniform(-0.1, 0.12) * ch),
              (rng.uniform(0.88, 1.1) * cw, centre[1]), (centre[0], rng.uniform(0.88, 1.1) * ch)][side]
    quad = [(x + target[0] - centre[0], y + target[1] - centre[1]) for x, y in quad]
    paste_document(canvas, rng, toned(sheet, rng), quad)


ASPECTS = (16 / 9, 9 / 16, 4 / 3, 3 / 4, 1 / 1.414, 1.0)


def frame_filling_quad(rng, cw, ch):
    """Corners (tl, tr, br, bl) of a page that fills the frame (stop 44): each side outside the frame's edge (up to
    a fifth of the frame beyond it, sometimes much more: a close-up of a part of the page) except 0 to 2 sides
    visible just inside it (1-8% of the frame), then a small rotation and perspective."""
    visible = set(rng.choice(4, size=int(rng.choice([0, 1, 2], p=[0.35, 0.4, 0.25])), replace=False).tolist())
    zoom = rng.random() < 0.2
    edges = []
    for side in range(4):  # left, top, right, bottom: the distance of the page's side outside the frame's edge
        span = cw if side in (0, 2) else ch
        if side in visible:
            edges.append(-rng.uniform(0.01, 0.08) * span)
        else:
            edges.append(rng.uniform(0.0, 0.6 if zoom else 0.2) * span)
    left, top, right, bottom = -edges[0], -edges[1], cw + edges[2], ch + edges[3]
    corners = np.array([(left, top), (right, top), (right, bottom), (left, bottom)], float)
    centre = corners.mean(0)
    angle = rng.normal(0, 0.03)
    c, s = math.cos(angle), math.sin(angle)
    corners = (corners - centre) @ np.array([[c, s], [-s, c]]) + centre
    corners += rng.normal(0, 0.02, (4, 2)) * np.array([cw, ch])
    return [tuple(map(float, p)) for p in corners]


def spread(left, right, rng):
    """A book's spread: two pages side by side at the height of the first, a shaded gutter between them."""
    h = left.height
    right = right.resize((max(1, round(right.width * h / right.height)), h), Image.BILINEAR)
    if right.width > 1.6 * left.width or right.width < 0.6 * left.width:
        right = right.resize((left.width, h), Image.BILINEAR)
    page = Image.new("RGB", (left.width + right.width, h))
    page.paste(left, (0, 0)); page.paste(right, (left.width, 0))
    a = np.asarray(page, np.float32)
    x = np.arange(page.width, dtype=np.float32) - left.width
    width = rng.uniform(0.02, 0.08) * page.width
    a = a * (1 - rng.uniform(0.2, 0.6) * np.exp(-(x / width) ** 2))[None, :, None]
    return Image.fromarray(a.clip(0, 255).astype(np.uint8))


def random_quad(rng, cw, ch, doc_aspect, partial):
    """Corners (tl, tr, br, bl) of a document of aspect `doc_aspect` under a random pose and perspective."""
    area = rng.uniform(0.08, 0.6) * cw * ch
    w = math.sqrt(area * doc_aspect); h = area / w
    angle = rng.uniform(-math.pi, math.pi) if rng.random() < 0.5 else rng.normal(0, 0.25)
    c, s = math.cos(angle), math.sin(angle)
    corners = []
    for px, py in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)):
        jitter = 0.12 * min(w, h)
        px += rng.normal(0, jitter / 2); py += rng.normal(0, jitter / 2)
        corners.append((c * px - s * py, s * px + c * py))
    xs = [p[0] for p in corners]; ys = [p[1] for p in corners]
    span_x = max(xs) - min(xs); span_y = max(ys) - min(ys)
    if partial:
        cx = rng.uniform(0, cw); cy = rng.uniform(0, ch)
    else:
        if span_x > cw * 0.98 or span_y > ch * 0.98:
            k = 0.95 * min(cw / span_x, ch / span_y)
            corners = [(x * k, y * k) for x, y in corners]
            xs = [p[0] for p in corners]; ys = [p[1] for p in corners]
            span_x = max(xs) - min(xs); span_y = max(ys) - min(ys)
        cx = rng.uniform(-min(xs), cw - max(xs)) if cw - span_x > 0 else cw / 2
        cy = rng.uniform(-min(ys), ch - max(ys)) if ch - span_y > 0 else ch / 2
    return [(x + cx, y + cy) for x, y in corners]


def paste_document(canvas, rng, doc, quad, shadow=True):
    """Warps `doc` onto `canvas` at `quad`, with a soft shadow; returns the document's coverage (L image)."""
    cw, ch = canvas.size
    w, h = doc.size
    coeffs = perspective_coeffs(quad, [(0, 0), (w, 0), (w, h), (0, h)])
    warped = doc.transform((cw, ch), Image.PERSPECTIVE, coeffs, Image.BILINEAR)
    cover = Image.new("L", (cw, ch), 0)
    ImageDraw.Draw(cover).polygon(quad, fill=255)
    if shadow and rng.random() < 0.7:
        dx, dy = rng.normal(0, 3, 2)
        shade = cover.transform((cw, ch), Image.AFFINE, (1, 0, -dx, 0, 1, -dy)).filter(
            ImageFilter.GaussianBlur(rng.uniform(2, 8)))
        k = rng.uniform(0.15, 0.45)
        base = np.asarray(canvas, np.float32) * (1 - k * np.asarray(shade, np.float32)[..., None] / 255)
        canvas.paste(Image.fromarray(base.clip(0, 255).astype(np.uint8)))
    canvas.paste(warped, (0, 0), cover.filter(ImageFilter.GaussianBlur(0.6)))
    return cover


def toned(doc, rng):
    """A document image under a random paper tone and contrast (prints, yellowed paper, glossy magazines)."""
    a = np.asarray(doc, np.float32)
    a = a * rng.uniform(0.75, 1.05) + rng.uniform(-10, 15)
    a = a * rng.uniform(0.9, 1.05, 3)
    return Image.fromarray(a.clip(0, 255).astype(np.uint8))


def draw_occluders(canvas, rng, cw, ch):
    """Cables (long curves) and pens (short thick strokes) across the canvas, often over the document."""
    draw = ImageDraw.Draw(canvas)
    scale = max(cw, ch) / 400
    for _ in range(int(rng.integers(0, 4))):
        colour = tuple(int(v) for v in (rng.integers(0, 60, 3) if rng.random() < 0.6 else rng.integers(0, 256, 3)))
        if rng.random() < 0.5:  # cable: a cubic Bezier from edge to edge
            p = [np.array([rng.uniform(-0.1, 1.1) * cw, rng.uniform(-0.1, 1.1) * ch]) for _ in range(4)]
            t = np.linspace(0, 1, 60)[:, None]
            pts = ((1 - t) ** 3 * p[0] + 3 * (1 - t) ** 2 * t * p[1] + 3 * (1 - t) * t ** 2 * p[2] + t ** 3 * p[3])
            draw.line([tuple(q) for q in pts], fill=colour, width=max(1, int(rng.uniform(1.5, 6) * scale)),
                      joint="curve")
        else:  # pen: a straight thick segment with a lighter highlight along it
            x, y = rng.uniform(0, cw), rng.uniform(0, ch)
            length = rng.uniform(0.15, 0.4) * max(cw, ch); angle = rng.uniform(0, math.pi)
            end = (x + length * math.cos(angle), y + length * math.sin(angle))
            width = max(2, int(rng.uniform(4, 10) * scale))
            draw.line([(x, y), end], fill=colour, width=width)
            light = tuple(min(255, c + 70) for c in colour)
            draw.line([(x, y), end], fill=light, width=max(1, width // 4))


def lit(canvas, rng):
    """Lighting: a gradient and a vignette, colour temperature, brightness and contrast."""
    a = np.asarray(canvas, np.float32)
    h, w = a.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    gx, gy = rng.normal(0, 0.4, 2)
    gradient = 1 + gx * (xx / w - 0.5) + gy * (yy / h - 0.5)
    r2 = ((xx / w - rng.uniform(0.3, 0.7)) ** 2 + (yy / h - rng.uniform(0.3, 0.7)) ** 2)
    vignette = 1 - rng.uniform(0, 0.5) * r2
    a = a * (gradient * vignette)[..., None] * rng.uniform(0.85, 1.15, 3) * rng.uniform(0.6, 1.2)
    mean = a.mean()
    a = (a - mean) * rng.uniform(0.7, 1.2) + mean
    if rng.random() < 0.3:  # a soft shadow band (a hand, the phone)
        band = Image.new("L", (w, h), 0)
        x0 = rng.uniform(0, w)
        ImageDraw.Draw(band).polygon([(x0, 0), (x0 + rng.uniform(-w, w) / 2, h), (w * 2, h), (w * 2, 0)], fill=255)
        band = np.asarray(band.filter(ImageFilter.GaussianBlur(w / 20)), np.float32) / 255
        a = a * (1 - rng.uniform(0.2, 0.5) * band)[..., None]
    return Image.fromarray(a.clip(0, 255).astype(np.uint8))


def degraded(canvas, rng):
    """Blur, noise and JPEG at the camera's resolution."""
    if rng.random() < 0.7:
        canvas = canvas.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 2.0) * max(canvas.size) / 640))
    a = np.asarray(canvas, np.float32) + rng.normal(0, rng.uniform(0, 6), (canvas.height, canvas.width, 1))
    canvas = Image.fromarray(a.clip(0, 255).astype(np.uint8))
    buffer = io.BytesIO()
    canvas.save(buffer, "JPEG", quality=int(rng.integers(30, 95)))
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def composite(pools, rng, long_side=480, sheets=None):
    """One composite: (RGB image, the target's corners tl, tr, br, bl in its pixels). The corners of every other
    sheet drawn are appended to `sheets` when it is given."""
    fills = pools.fills_frame and rng.random() < pools.fills_frame  # no draw without it: the same composites
    if fills:  # the target first: the frame takes about its shape, as a page photographed to fill it
        kind = pools.pages if pools.pages and rng.random() < 0.9 else pools.documents  # pages, some cards
        target = chosen = kind[int(rng.integers(0, len(kind)))]
        if rng.random() < 0.25:
            target = spread(target, pools.pages[int(rng.integers(0, len(pools.pages)))] if pools.pages else target, rng)
        if rng.random() < 0.5:
            target = target.rotate(90 * int(rng.integers(1, 4)), expand=True)
        aspect = (min(ASPECTS, key=lambda a: abs(math.log(a * target.height / target.width))) if rng.random() < 0.8
                  else ASPECTS[int(rng.integers(0, len(ASPECTS)))])
    else:
        aspect = ASPECTS[int(rng.integers(0, len(ASPECTS)))]
    cw, ch = (long_side, round(long_side / aspect)) if aspect >= 1 else (round(long_side * aspect), long_side)
    canvas = None
    if pools.richer and rng.random() < 0.5:
        canvas = procedural_desk(rng, cw, ch)
    while canvas is None:
        canvas = pools.backgrounds[int(rng.integers(0, len(pools.backgrounds)))].crop(rng, cw / ch)
        if canvas is not None and pools.richer and rng.random() < 0.4:  # another colour of the same surface
            canvas = Image.merge("RGB", [canvas.getchannel(int(c)) for c in rng.permutation(3)])
    canvas = canvas.resize((cw, ch), Image.BILINEAR)
    if rng.random() < 0.5:
        canvas = canvas.transpose(Image.FLIP_LEFT_RIGHT)
    if rng.random() < 0.5:
        canvas = canvas.transpose(Image.FLIP_TOP_BOTTOM)
    canvas = toned(canvas, rng)
    if pools.richer:
        desk_objects(canvas, rng)
    if pools.pale_edge and rng.random() < pools.pale_edge:
        pale_edge_surface(canvas, rng, pools)
    if not fills:
        target = chosen = pools.documents[int(rng.integers(0, len(pools.documents)))]
    if pools.richer and rng.random() < 0.35:
        target = with_dark_figures(target, rng, pools.photos())
    if not fills and rng.random() < 0.5:
        target = target.rotate(90 * int(rng.integers(1, 4)), expand=True)
    if fills:
        quad = frame_filling_quad(rng, cw, ch)
    else:
        quad = random_quad(rng, cw, ch, target.width / target.height, partial=rng.random() < 0.1)
    # Other sheets, magazines and cards: around the target, some under it (drawn before it).
    for _ in range(int(rng.choice([0, 1, 1, 2, 2, 3, 4]))):
        other = pools.documents[int(rng.integers(0, len(pools.documents)))]
        if other is chosen:
            continue
        # Under the target (near it, overlapping, partly covered by it), else at the frame's edge: the target is
        # the one whole sheet on top, as the sheet a user photographs is.
        under = rng.random() < 0.5
        other_quad = random_quad(rng, cw, ch, other.width / other.height, partial=not under)
        if under:
            cx = sum(p[0] for p in quad) / 4 - sum(p[0] for p in other_quad) / 4
            cy = sum(p[1] for p in quad) / 4 - sum(p[1] for p in other_quad) / 4
            k = rng.uniform(0.3, 1.0)
            other_quad = [(x + cx * k + rng.normal(0, cw / 10), y + cy * k + rng.normal(0, ch / 10))
                          for x, y in other_quad]
        if pools.richer and rng.random() < 0.25:
            other = with_dark_figures(other, rng, pools.photos())
        paste_document(canvas, rng, toned(other, rng), other_quad)
        if sheets is not None:
            sheets.append(other_quad)
    paste_document(canvas, rng, toned(target, rng), quad)
    draw_occluders(canvas, rng, cw, ch)
    canvas = degraded(lit(canvas, rng), rng)
    return canvas, quad


# A photo is of one document when that document is whole in the frame and every other sheet shows less than this
# share of its area (outside it, inside the frame): the document a user photographs, not one of several alike.
CLEAR_SUBJECT_SHARE = 0.5


def clear_subject(quad, sheets, width, height):
    """Whether the target at `quad` is clearly the photo's document among the other `sheets` (CLEAR_SUBJECT_SHARE):
    a test set's target must be, or the photo has no one right answer (a target half out of frame beside a whole
    card, a slip on a page that fills the frame)."""
    if not all(0 <= x <= width and 0 <= y <= height for x, y in quad):
        return False
    scale = 0.25

    def cover(corners):
        image = Image.new("L", (max(1, round(width * scale)), max(1, round(height * scale))), 0)
        ImageDraw.Draw(image).polygon([(x * scale, y * scale) for x, y in corners], fill=1)
        return np.asarray(image, bool)

    target = cover(quad)
    limit = CLEAR_SUBJECT_SHARE * target.sum()
    return all((cover(other) & ~target).sum() < limit for other in sheets)


def clear_composites(pools, rng, count, long_side):
    """`count` composites whose target is clearly the photo's document (`clear_subject`), drawn in turn from `rng`
    (the others are made and passed over): (RGB image, corners)."""
    made = 0
    while made < count:
        sheets = []
        image, quad = composite(pools, rng, long_side, sheets=sheets)
        if clear_subject(quad, sheets, image.width, image.height):
            made += 1
            yield image, quad


def input_array(image, size):
    """The network's input: the whole image squashed to size x size, RGB in [0, 1], CHW float32."""
    small = image.convert("RGB").resize((size, size), Image.BILINEAR)
    return np.asarray(small, np.float32).transpose(2, 0, 1) / 255.0


def mask_array(quad, width, height, size):
    """The label: the quadrilateral's coverage of each cell of the size x size grid (soft at the edges)."""
    k = 4
    mask = Image.new("L", (size * k, size * k), 0)
    ImageDraw.Draw(mask).polygon([(x * size * k / width, y * size * k / height) for x, y in quad], fill=255)
    return np.asarray(mask.resize((size, size), Image.BOX), np.float32) / 255.0


def batch(pools, rng, count, size, long_side=480):
    xs = np.zeros((count, 3, size, size), np.float32)
    ys = np.zeros((count, 1, size, size), np.float32)
    for i in range(count):
        image, quad = composite(pools, rng, long_side)
        xs[i] = input_array(image, size)
        ys[i, 0] = mask_array(quad, image.width, image.height, size)
    return xs, ys
