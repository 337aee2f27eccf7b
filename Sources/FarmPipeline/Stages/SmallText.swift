import FarmCore
import Leptonica

/// `--min-text-height`: text lines smaller than a fraction of the page's height are painted out before
/// recognition, so the engine neither reads them nor spends time on them.
///
/// Lines are found at the image level: dark pixels (Otsu-like fixed threshold on the corrected gray page) grown
/// sideways by about a line height, so the glyphs of a line (and its dots and accents) join into one blob; a blob
/// shorter than the limit, once the growth is taken off, is small text.
enum SmallText {
    /// The page with text lines shorter than `fraction` of its height whitened, and how many lines that was.
    static func removed(from image: Pix, below fraction: Double) throws(LeptonicaError) -> (image: Pix, lines: Int) {
        let limit = fraction * Double(image.height)
        let sideways = max(3, Int(limit.rounded()))
        let upward = max(1, Int((limit / 5).rounded()))
        let blobs = try image.binarized(threshold: 160).componentBoxes(grownBy: sideways, upward)
        let small = blobs.filter { Double($0.height - upward) < limit && $0.width > 0 }
        guard !small.isEmpty else { return (image, 0) }
        return (try image.whitened(small), small.count)
    }
}
