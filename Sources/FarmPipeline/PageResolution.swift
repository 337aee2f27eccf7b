import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// The resolution a page was scanned at, which sets its PDF page's size: the file's when it says one that makes a
/// paper-sized page, else inferred from the page itself.
///
/// Files often carry no resolution (PNGs from scanners and phones) or a screen default (72 or 96 pixels per inch
/// written by software that never knew): an A4 page of 2480 pixels at "96 dpi" would be 26 inches wide. The page
/// says more than that: its shape matches a paper size (A-series, Letter, Legal), and its text has a size (body
/// text lines are about 0.14 inch from ascender to descender, 10 to 12 point type). Where the shape matches a
/// paper, the paper whose resolution the text size agrees with best is taken, so the PDF page is exactly A4 or
/// Letter; else the text size alone, rounded to a scanner's usual setting; with neither, 300.
public enum PageResolution {
    /// Paper sizes in inches, portrait (width, height).
    static let papers: [(name: String, width: Double, height: Double)] = [
        ("A4", 8.27, 11.69), ("Letter", 8.5, 11), ("Legal", 8.5, 14), ("A5", 5.83, 8.27), ("A3", 11.69, 16.54),
        ("B5", 6.93, 9.84), ("Tabloid", 11, 17),
    ]
    /// A line of body text, ascender to descender, in inches.
    static let lineHeight = 0.14
    /// Settings scanners offer; a text-size estimate within 12% of one is taken as it.
    static let usual = [100, 150, 200, 240, 300, 400, 600, 1200]
    /// A declared resolution that makes the page's long side longer than this (inches) is not believed: larger
    /// than a broadsheet newspaper page.
    static let longestPaper = 24.0
    public static let fallback = 300

    /// How the resolution was chosen, for the page's findings.
    public enum Source: String, Sendable { case option, file, paper, text, fallback }

    /// The resolution (pixels per inch of an image `width` × `height`) and how it was found. `declared`: the
    /// file's (0 when none); `lineHeights`: heights in pixels of the page's text lines, in the same image.
    public static func choose(width: Int, height: Int, declared: Int, lineHeights: [Int], option: Int? = nil)
        -> (dpi: Double, source: Source)
    {
        if let option { return (Double(option), .option) }
        guard width > 0, height > 0 else { return (Double(fallback), .fallback) }
        let long = Double(max(width, height)), short = Double(min(width, height))
        if declared > 0, long / Double(declared) <= longestPaper, long / Double(declared) >= 2 {
            return (Double(declared), .file)
        }
        let text = textResolution(lineHeights)
        let ratio = long / short
        let matching = papers.filter { abs($0.height / $0.width - ratio) / ratio < 0.02 }
        if !matching.isEmpty {
            let candidates = matching.map { (short / $0.width) }
            if let text {
                // The paper whose resolution is nearest the text's (by ratio), if the text agrees at all.
                let best = candidates.min { abs(log($0 / text)) < abs(log($1 / text)) }!
                if abs(log(best / text)) < log(1.5) { return (best, .paper) }
            } else {
                return (candidates[0], .paper)
            }
        }
        if let text { return (Self.rounded(text), .text) }
        return (Double(fallback), .fallback)
    }

    /// The resolution the text lines' median height implies; nil with fewer than 3 lines.
    static func textResolution(_ lineHeights: [Int]) -> Double? {
        let heights = lineHeights.filter { $0 > 2 }.sorted()
        guard heights.count >= 3 else { return nil }
        return Double(heights[heights.count / 2]) / lineHeight
    }

    static func rounded(_ dpi: Double) -> Double {
        let nearest = usual.min { abs(Double($0) - dpi) < abs(Double($1) - dpi) }!
        return abs(Double(nearest) - dpi) / dpi < 0.12 ? Double(nearest) : dpi.rounded()
    }
}
