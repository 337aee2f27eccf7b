import Leptonica
import QPDF
import Tesseract

/// Facts about the engine and libraries installed on this host.
public enum TesseractInfo {
    /// Installed language models (without "osd").
    public static var installedLanguages: [String] { TesseractEngine.availableLanguages() }
    public static var hasOrientationData: Bool { TesseractEngine.hasOrientationData() }
    public static var version: String { TesseractEngine.version }
    public static var dataPath: String { TesseractEngine.defaultDataPath }
    public static var leptonicaVersion: String { LeptonicaLibrary.versions }
    public static var qpdfVersion: String { QPDF.version }
}
