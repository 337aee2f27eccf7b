import CTesseract
import Leptonica
#if canImport(Glibc)
import Glibc
#endif

/// Orientation and script detection (Tesseract's OSD model). Owns one `TessBaseAPI*` initialized with "osd",
/// ended and deleted in `deinit`. Not `Sendable`: one detector per page slot.
public final class OrientationDetector {
    private let handle: OpaquePointer

    public init(dataPath: String? = nil) throws(TesseractError) {
        LeptonicaLibrary.prepare()
        setlocale(LC_NUMERIC, "C")
        guard let handle = TessBaseAPICreate() else { throw TesseractError(.initialization, "cannot create an OSD engine") }
        TesseractGlobals.configure()
        let rc = TessBaseAPIInit3(handle, dataPath, "osd")
        guard rc == 0 else {
            TessBaseAPIDelete(handle)
            throw TesseractError(.initialization, "cannot load osd.traineddata from \(dataPath ?? TesseractEngine.defaultDataPath)")
        }
        TessBaseAPISetPageSegMode(handle, PSM_OSD_ONLY)
        self.handle = handle
    }

    deinit {
        TessBaseAPIEnd(handle)
        TessBaseAPIDelete(handle)
    }

    /// Detects how the page must be turned to be upright, and its script.
    public func detect(_ image: Leptonica.Pix, resolution: Int? = nil) throws(TesseractError) -> OrientationResult {
        TessBaseAPISetImage2(handle, image.pointer)
        let ppi = resolution ?? image.resolution.y
        TessBaseAPISetSourceResolution(handle, Int32(ppi > 0 ? ppi : 300))
        var degrees: Int32 = 0
        var confidence: Float = 0
        var script: UnsafePointer<CChar>?
        var scriptConfidence: Float = 0
        let ok = TessBaseAPIDetectOrientationScript(handle, &degrees, &confidence, &script, &scriptConfidence) != 0
        // The script name points into the model's character set: it is not ours to free (despite capi.h's comment).
        let scriptName = script.map { String(cString: $0) } ?? ""
        TessBaseAPIClear(handle)
        _ = LeptonicaLibrary.takeMessages()
        guard ok else { throw TesseractError(.orientation, "too little text to detect the orientation") }
        // Tesseract reports how far the content is turned clockwise; turning it clockwise by the rest of a full
        // turn makes it upright.
        return OrientationResult(rotation: (360 - Int(degrees)) % 360, confidence: Double(confidence), script: scriptName,
                                 scriptConfidence: Double(scriptConfidence))
    }
}
