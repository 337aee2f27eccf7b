import FarmCore

/// Where a page's renderings come from: the one "stored, else rendered" rule of `export` and the page API
/// (`/api/pages/{id}/{format}`). A rendering stored with the page's result (frozen at OCR time, or an older
/// store's) is the page's; hOCR, ALTO, PAGE and JSON (`PageArtifacts.renderedOnDemand`) it has not stored are
/// rendered from its model as the worker renders them at OCR time (render on demand, issue 19): the same bytes.
/// Anything else it has not stored is missing.
///
/// In steps, so that the store is read on its own thread and the models rendered on any: `fromModel` says which
/// formats to render, `rendered(from:)` renders them, `rendering(_:rendered:stored:)` gives a format's bytes.
public struct PageRenderings: Sendable, Equatable {
    /// The formats rendered from the page's model: those of `wanted` rendered on demand that it has not stored.
    public let fromModel: [OutputFormat]

    /// The renderings of `wanted` of a page whose stored renderings are named `stored` (`Store.artifactNames`).
    public init(_ wanted: [OutputFormat], stored: Set<String>) {
        fromModel = wanted.filter { PageArtifacts.renderedOnDemand.contains($0) && !stored.contains($0.rawValue) }
    }

    /// The `fromModel` renderings of `model`, by format (on any thread).
    public func rendered(from model: PageModel) -> [OutputFormat: [UInt8]] {
        guard !fromModel.isEmpty else { return [:] }
        return Dictionary(PageArtifacts.render(model, outputs: fromModel), uniquingKeysWith: { first, _ in first })
    }

    /// The page's `format`: as rendered from its model (`rendered`, from `rendered(from:)`), else as stored
    /// (`stored`, read only then); nil when it has neither.
    public static func rendering(_ format: OutputFormat, rendered: [OutputFormat: [UInt8]],
                          stored: () throws -> [UInt8]?) rethrows -> [UInt8]? {
        if let bytes = rendered[format] { return bytes }
        return try stored()
    }
}
