"""The document mask turned into a quadrilateral: its largest region, the largest quadrilateral on that region's
convex hull, each side refitted by least squares to the region's boundary near it.

This is the Python reference the evaluation uses; it is what a Swift stage would port.
"""
import numpy as np
from PIL import Image
from scipy import ndimage
from scipy.spatial import ConvexHull

UPSAMPLE = 4


def largest_region(prob, threshold=0.5):
    """The mask upsampled bilinearly (sub-cell edges) and thresholded: its largest 4-connected region, or None."""
    size = prob.shape[0]
    big = np.asarray(Image.fromarray(prob.astype(np.float32), "F").resize((size * UPSAMPLE, size * UPSAMPLE),
                                                                         Image.BILINEAR))
    labels, count = ndimage.label(big > threshold)
    if count == 0:
        return None
    areas = ndimage.sum(np.ones_like(labels), labels, index=np.arange(1, count + 1))
    return labels == (1 + int(np.argmax(areas)))


def max_area_quad(points):
    """The largest-area quadrilateral with corners among `points` (a convex polygon, counter-clockwise)."""
    n = len(points)
    if n > 64:
        points = points[np.linspace(0, n, 64, endpoint=False).astype(int)]
        n = 64
    if n < 4:
        return None
    x, y = points[:, 0], points[:, 1]
    # tri[i, j, k]: area of triangle (i, j, k), positive when counter-clockwise.
    tri = 0.5 * ((x[None, :, None] - x[:, None, None]) * (y[None, None, :] - y[:, None, None])
                 - (x[None, None, :] - x[:, None, None]) * (y[None, :, None] - y[:, None, None]))
    best, quad = -1.0, None
    idx = np.arange(n)
    for i in range(n):
        for j in range(i + 2, n - (1 if i == 0 else 0)):
            inside = idx[i + 1:j]
            outside = np.concatenate([idx[j + 1:], idx[:i]])
            if len(inside) == 0 or len(outside) == 0:
                continue
            k = inside[np.argmax(np.abs(tri[i, j, inside]))]
            m = outside[np.argmax(np.abs(tri[i, j, outside]))]
            area = abs(tri[i, j, k]) + abs(tri[i, j, m])
            if area > best:
                best, quad = area, [i, k, j, m]
    return points[quad]


def refined(quad, boundary):
    """Each side refitted to the boundary points near its middle 80%, corners at the lines' crossings."""
    lines = []
    for s in range(4):
        a, b = quad[s], quad[(s + 1) % 4]
        d = b - a
        length = np.hypot(*d)
        if length < 1e-6:
            return quad
        u = d / length
        rel = boundary - a
        along = rel @ u
        across = rel @ np.array([-u[1], u[0]])
        near = (along > 0.1 * length) & (along < 0.9 * length) & (np.abs(across) < max(2.0, 0.03 * length))
        pts = boundary[near]
        if len(pts) < 8:
            lines.append((a, u))
            continue
        centre = pts.mean(0)
        _, _, vt = np.linalg.svd(pts - centre)
        direction = vt[0] if vt[0] @ u >= 0 else -vt[0]
        lines.append((centre, direction))
    corners = []
    for s in range(4):
        (p, r), (q, t) = lines[s - 1], lines[s]
        m = np.array([r, -t]).T
        if abs(np.linalg.det(m)) < 1e-6:
            corners.append(quad[s])
            continue
        k = np.linalg.solve(m, q - p)
        corners.append(p + k[0] * r)
    corners = np.array(corners)
    # A refit that moves a corner far is not trusted.
    if np.max(np.hypot(*(corners - quad).T)) > 0.1 * np.max(np.hypot(*(quad - quad.mean(0)).T)):
        return quad
    return corners


def ordered(quad):
    """tl, tr, br, bl: the corner nearest the top-left first, clockwise in image coordinates."""
    centre = quad.mean(0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    quad = quad[np.argsort(angles)]  # clockwise on screen (y down)
    start = int(np.argmin(quad[:, 0] + quad[:, 1]))
    return np.roll(quad, -start, axis=0)


def quad_from_mask(prob, width, height):
    """The document's corners (tl, tr, br, bl) in the photo's pixels from the model's mask, or None."""
    region = largest_region(prob)
    if region is None or region.sum() < 16:
        return None
    ys, xs = np.nonzero(region)
    pts = np.stack([xs, ys], 1).astype(np.float64) + 0.5
    try:
        hull = ConvexHull(pts)
    except Exception:
        return None
    quad = max_area_quad(pts[hull.vertices])
    if quad is None:
        return None
    edge = region & ~ndimage.binary_erosion(region)
    ys, xs = np.nonzero(edge)
    boundary = np.stack([xs, ys], 1).astype(np.float64) + 0.5
    quad = refined(quad, boundary)
    grid = region.shape[0]
    scale = np.array([width / grid, height / grid])
    return ordered(quad * scale)
