import FarmCore

/// `status --quality`: how many pages were measured, how many are below 0.5, and the weakest, rendered beside the
/// report (`FarmReport.json`, `.text`).
public struct QualitySummary: Sendable, Equatable {
    public let review: QualityReview
    public let belowHalf: Int

    public init(review: QualityReview, belowHalf: Int) {
        self.review = review
        self.belowHalf = belowHalf
    }

    /// {measured, unmeasured, below_half, weakest[{document, page, figure}]}
    public var json: JSON {
        .object([
            ("measured", JSON(review.measured)), ("unmeasured", JSON(review.unmeasured)),
            ("below_half", JSON(belowHalf)),
            ("weakest", .array(review.pages.map {
                .object([("document", JSON($0.document.name)), ("page", JSON($0.number)),
                         ("figure", .rounded($0.quality.figure, places: 3))])
            })),
        ])
    }

    /// One line: the pages measured (and not), how many below 0.5, the weakest with their figures.
    public var text: String {
        "quality: \(review.measured) pages measured"
            + (review.unmeasured > 0 ? " (\(review.unmeasured) not)" : "")
            + ", \(belowHalf) below 0.5"
            + (review.pages.isEmpty ? "" : "; weakest: " + review.pages.map {
                "\(Printable.text($0.document.name)) p\($0.number) \(Format.fixed($0.quality.figure, 2))"
            }.joined(separator: ", ")) + " (ocrfarm review for more)\n"
    }
}
