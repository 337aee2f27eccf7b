import ONNXRuntime
import Testing

/// Real models on real input, compared with what ONNX Runtime's own Python binding (1.32.0) gives on the same input
/// with the same settings. Every number below was printed by
///
///     OMP_THREAD_LIMIT=1 /opt/ort-ref/bin/python Tests/ONNXRuntimeTests/Golden/make_golden.py
///
/// (which also wrote the two crops in Golden/). A wrong OrtApi position crashes these or changes the numbers.
@Suite("ONNX Runtime: outputs match the Python binding")
struct ONNXRuntimeGoldenTests {
    @Test("the library loads once, with its version")
    func loads() throws {
        let runtime = try NeuralInstall.runtime()
        #expect(runtime.version == "1.32.0")
        #expect(try NeuralInstall.runtime() === runtime)
        #expect(try ONNXRuntime.load(libraryPath: runtime.libraryPath) === runtime)
    }

    @Test("the 0/180 line classifier on a line of phototest, turned and cut")
    func lineClassifier() throws {
        let session = try InferenceSession(runtime: try NeuralInstall.runtime(),
                                           modelPath: try NeuralInstall.model(NeuralInstall.classifier))
        #expect(session.inputNames == ["x"])
        #expect(session.outputNames == ["save_infer_model/scale_0.tmp_1"])
        let output = try session.run(try GoldenInput.classifierBatch())
        #expect(output.shape == [4, 2])
        // Python: values [1.0, 0.0, 0.0, 1.0, 0.117567, 0.882433, 0.988439, 0.011561]
        let expected: [Float] = [1.0, 0.0, 0.0, 1.0, 0.117567, 0.882433, 0.988439, 0.011561]
        try #require(output.values.count == expected.count)
        for (index, value) in expected.enumerated() {
            #expect(abs(output.values[index] - value) < 1e-4, "element \(index): \(output.values[index]) vs \(value)")
        }
    }

    @Test("the PP-OCRv6 detector on a 96x64 block of phototest")
    func detector() throws {
        let session = try InferenceSession(runtime: try NeuralInstall.runtime(),
                                           modelPath: try NeuralInstall.model(NeuralInstall.detector))
        #expect(session.inputNames == ["x"])
        #expect(session.outputNames == ["fetch_name_0"])
        let output = try session.run(try GoldenInput.detectorInput())
        try #require(output.shape == [1, 1, 64, 96])
        try #require(output.values.count == 6144)
        // Python: sum 2067.2848  mean 0.336472  max 0.999209  min 0.000000  above0.3 2129  argmax 1839
        let sum = output.values.reduce(0.0) { $0 + Double($1) }
        #expect(abs(sum - 2067.2848) < 0.05, "sum \(sum)")
        #expect(abs(sum / 6144 - 0.336472) < 1e-4, "mean \(sum / 6144)")
        #expect(abs(output.values.max()! - 0.999209) < 1e-4)
        #expect(abs(output.values.min()! - 0.0) < 1e-4)
        // Pixels right at the threshold could fall either side of it by a last-place difference.
        let above = output.values.filter { $0 > 0.3 }.count
        #expect(abs(above - 2129) <= 3, "\(above) above 0.3")
        // Python: [0] 0.000000 [95] 0.000001 [1000] 0.030376 [2000] 0.998614 [2345] 0.990697 [3000] 0.002482
        //         [4321] 0.000018 [6143] 0.000002 [1839] 0.999209
        let samples: [(Int, Float)] = [(0, 0.000000), (95, 0.000001), (1000, 0.030376), (2000, 0.998614),
                                       (2345, 0.990697), (3000, 0.002482), (4321, 0.000018), (6143, 0.000002),
                                       (1839, 0.999209)]
        for (index, value) in samples {
            #expect(abs(output.values[index] - value) < 1e-4, "element \(index): \(output.values[index]) vs \(value)")
        }
    }
}
