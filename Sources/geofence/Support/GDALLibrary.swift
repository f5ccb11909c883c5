#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// GDAL's C API, loaded at run time with `dlopen`: the few OGR and OSR
/// functions the import of a GDAL source needs, looked up by name into typed
/// function pointers. Loading GDAL only when a GDAL source is imported keeps
/// libgdal out of the build, out of the extension, and off machines that never
/// read anything but GeoJSON; a machine without it gets an error saying which
/// package to install.
///
/// Handles (datasets, layers, features, geometries, spatial references) are
/// opaque pointers, as in GDAL's own headers. GDAL's error handler is this
/// program's recorder (`GDALErrors`): failures are read back from it after a
/// call and reported in this program's words, never printed by GDAL itself.
struct GDALLibrary: @unchecked Sendable {
    typealias Handle = UnsafeMutableRawPointer
    typealias Text = UnsafePointer<CChar>
    typealias TextList = UnsafePointer<UnsafePointer<CChar>?>

    // GDAL's constants (gdal.h, ogr_core.h, ogr_srs_api.h).
    static let openVector: UInt32 = 0x04, openReadOnly: UInt32 = 0x00, openVerboseError: UInt32 = 0x40
    static let traditionalGISOrder: Int32 = 0    // OAMS_TRADITIONAL_GIS_ORDER: longitude, latitude
    static let littleEndian: Int32 = 1           // wkbNDR

    let allRegister: @convention(c) () -> Void
    let openEx: @convention(c) (Text, UInt32, TextList?, TextList?, TextList?) -> Handle?
    let close: @convention(c) (Handle) -> Void
    let driverOf: @convention(c) (Handle) -> Handle?
    let driverShortName: @convention(c) (Handle) -> Text?
    let driverByName: @convention(c) (Text) -> Handle?
    let layerCount: @convention(c) (Handle) -> Int32
    let layerAt: @convention(c) (Handle, Int32) -> Handle?
    let metadataItem: @convention(c) (Handle, Text, Text?) -> Text?
    let fileList: @convention(c) (Handle) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    let destroyList: @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Void

    let layerName: @convention(c) (Handle) -> Text?
    let layerSpatialRef: @convention(c) (Handle) -> Handle?
    let layerDefinition: @convention(c) (Handle) -> Handle?
    let resetReading: @convention(c) (Handle) -> Void
    let featureCount: @convention(c) (Handle, Int32) -> Int64
    let nextFeature: @convention(c) (Handle) -> Handle?

    let fieldCount: @convention(c) (Handle) -> Int32
    let fieldDefinition: @convention(c) (Handle, Int32) -> Handle?
    let fieldName: @convention(c) (Handle) -> Text?
    let fieldType: @convention(c) (Handle) -> Int32
    let fieldSubType: @convention(c) (Handle) -> Int32

    let destroyFeature: @convention(c) (Handle) -> Void
    let featureId: @convention(c) (Handle) -> Int64
    let isFieldSetAndNotNull: @convention(c) (Handle, Int32) -> Int32
    let fieldAsInteger64: @convention(c) (Handle, Int32) -> Int64
    let fieldAsDouble: @convention(c) (Handle, Int32) -> Double
    let fieldAsString: @convention(c) (Handle, Int32) -> Text?
    let fieldAsDateTime: @convention(c) (Handle, Int32, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>,
                                         UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>,
                                         UnsafeMutablePointer<Float>, UnsafeMutablePointer<Int32>) -> Int32
    let fieldAsIntegerList: @convention(c) (Handle, Int32, UnsafeMutablePointer<Int32>) -> UnsafePointer<Int32>?
    let fieldAsInteger64List: @convention(c) (Handle, Int32, UnsafeMutablePointer<Int32>) -> UnsafePointer<Int64>?
    let fieldAsDoubleList: @convention(c) (Handle, Int32, UnsafeMutablePointer<Int32>) -> UnsafePointer<Double>?
    let fieldAsStringList: @convention(c) (Handle, Int32) -> UnsafePointer<UnsafeMutablePointer<CChar>?>?
    let geometryOf: @convention(c) (Handle) -> Handle?

    let cloneGeometry: @convention(c) (Handle) -> Handle?
    let destroyGeometry: @convention(c) (Handle) -> Void
    let geometryName: @convention(c) (Handle) -> Text?
    let hasCurveGeometry: @convention(c) (Handle, Int32) -> Int32
    let linearGeometry: @convention(c) (Handle, Double, TextList?) -> Handle?
    let transform: @convention(c) (Handle, Handle) -> Int32
    let wkbSize: @convention(c) (Handle) -> Int
    let exportToIsoWkb: @convention(c) (Handle, Int32, UnsafeMutablePointer<UInt8>) -> Int32

    let newSpatialRef: @convention(c) (Text?) -> Handle?
    let destroySpatialRef: @convention(c) (Handle) -> Void
    let cloneSpatialRef: @convention(c) (Handle) -> Handle?
    let setFromUserInput: @convention(c) (Handle, Text) -> Int32
    let setAxisMappingStrategy: @convention(c) (Handle, Int32) -> Void
    let isSame: @convention(c) (Handle, Handle) -> Int32
    let newTransformation: @convention(c) (Handle, Handle) -> Handle?
    let destroyTransformation: @convention(c) (Handle) -> Void


    /// The libraries tried, in order: the one `GEOFENCE_LIBGDAL` names (a path
    /// or soname, for a GDAL installed elsewhere) alone, else the sonames of
    /// GDAL 3.3 (libgdal.so.29) and later, newest first, then the bare name.
    static func candidates() -> [String] {
        if let given = getenv("GEOFENCE_LIBGDAL") { return [String(cString: given)] }
        var names: [String] = []
        for major in (29...40).reversed() { names.append("libgdal.so.\(major)") }
        names.append("libgdal.so")
        return names
    }

    nonisolated(unsafe) private static var loaded: GDALLibrary?

    /// GDAL, loaded once and registered (all drivers); throws a message for the
    /// user when no libgdal can be loaded or it lacks a function needed here.
    static func shared() throws(LoadError) -> GDALLibrary {
        if let loaded { return loaded }
        var handle: UnsafeMutableRawPointer?
        var firstError: String?
        for name in candidates() {
            handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)
            if handle != nil { break }
            if firstError == nil, let e = dlerror() { firstError = String(cString: e) }
        }
        guard let handle else { throw LoadError.notInstalled(firstError ?? "") }
        let library: GDALLibrary
        do { library = try GDALLibrary(handle) } catch { dlclose(handle); throw error }  // a GDAL too old: nothing kept open
        library.allRegister()
        try library.setRecordingErrorHandler(handle)
        loaded = library
        return library
    }

    /// Why GDAL could not be used.
    enum LoadError: Error {
        case notInstalled(String)
        case missing(String)

        var description: String {
            switch self {
            case .notInstalled:
                return "reading this format needs the GDAL library (libgdal), which is not installed (Debian: apt-get install gdal-bin, or libgdal32; GEOFENCE_LIBGDAL names a libgdal elsewhere)"
            case .missing(let name):
                return "the GDAL library loaded lacks its function \(name): GDAL 3.3 or later is needed"
            }
        }
    }

    private init(_ h: UnsafeMutableRawPointer) throws(LoadError) {
        func f<T>(_ name: String) throws(LoadError) -> T {
            guard let p = dlsym(h, name) else { throw LoadError.missing(name) }
            return unsafeBitCast(p, to: T.self)
        }
        allRegister = try f("GDALAllRegister")
        openEx = try f("GDALOpenEx")
        close = try f("GDALClose")
        driverOf = try f("GDALGetDatasetDriver")
        driverShortName = try f("GDALGetDriverShortName")
        driverByName = try f("GDALGetDriverByName")
        layerCount = try f("GDALDatasetGetLayerCount")
        layerAt = try f("GDALDatasetGetLayer")
        metadataItem = try f("GDALGetMetadataItem")
        fileList = try f("GDALGetFileList")
        destroyList = try f("CSLDestroy")
        layerName = try f("OGR_L_GetName")
        layerSpatialRef = try f("OGR_L_GetSpatialRef")
        layerDefinition = try f("OGR_L_GetLayerDefn")
        resetReading = try f("OGR_L_ResetReading")
        featureCount = try f("OGR_L_GetFeatureCount")
        nextFeature = try f("OGR_L_GetNextFeature")
        fieldCount = try f("OGR_FD_GetFieldCount")
        fieldDefinition = try f("OGR_FD_GetFieldDefn")
        fieldName = try f("OGR_Fld_GetNameRef")
        fieldType = try f("OGR_Fld_GetType")
        fieldSubType = try f("OGR_Fld_GetSubType")
        destroyFeature = try f("OGR_F_Destroy")
        featureId = try f("OGR_F_GetFID")
        isFieldSetAndNotNull = try f("OGR_F_IsFieldSetAndNotNull")
        fieldAsInteger64 = try f("OGR_F_GetFieldAsInteger64")
        fieldAsDouble = try f("OGR_F_GetFieldAsDouble")
        fieldAsString = try f("OGR_F_GetFieldAsString")
        fieldAsDateTime = try f("OGR_F_GetFieldAsDateTimeEx")
        fieldAsIntegerList = try f("OGR_F_GetFieldAsIntegerList")
        fieldAsInteger64List = try f("OGR_F_GetFieldAsInteger64List")
        fieldAsDoubleList = try f("OGR_F_GetFieldAsDoubleList")
        fieldAsStringList = try f("OGR_F_GetFieldAsStringList")
        geometryOf = try f("OGR_F_GetGeometryRef")
        cloneGeometry = try f("OGR_G_Clone")
        destroyGeometry = try f("OGR_G_DestroyGeometry")
        geometryName = try f("OGR_G_GetGeometryName")
        hasCurveGeometry = try f("OGR_G_HasCurveGeometry")
        linearGeometry = try f("OGR_G_GetLinearGeometry")
        transform = try f("OGR_G_Transform")
        wkbSize = try f("OGR_G_WkbSizeEx")
        exportToIsoWkb = try f("OGR_G_ExportToIsoWkb")
        newSpatialRef = try f("OSRNewSpatialReference")
        destroySpatialRef = try f("OSRDestroySpatialReference")
        cloneSpatialRef = try f("OSRClone")
        setFromUserInput = try f("OSRSetFromUserInput")
        setAxisMappingStrategy = try f("OSRSetAxisMappingStrategy")
        isSame = try f("OSRIsSame")
        newTransformation = try f("OCTNewCoordinateTransformation")
        destroyTransformation = try f("OCTDestroyCoordinateTransformation")
    }

    /// `GDALErrors.handler` as GDAL's handler for every thread: failures are
    /// recorded for the reader to ask about, and nothing is printed ("ERROR 1:
    /// …" amid our output).
    private func setRecordingErrorHandler(_ h: UnsafeMutableRawPointer) throws(LoadError) {
        typealias Handler = @convention(c) (Int32, Int32, UnsafePointer<CChar>?) -> Void
        typealias SetHandler = @convention(c) (Handler?) -> Handler?
        guard let set = dlsym(h, "CPLSetErrorHandler") else { throw LoadError.missing("CPLSetErrorHandler") }
        _ = unsafeBitCast(set, to: SetHandler.self)(GDALErrors.handler)
    }

    /// The files GDAL reads for `dataset` (a Shapefile's .shp, .shx, .dbf, …), as paths.
    func files(of dataset: Handle) -> [String] {
        guard let list = fileList(dataset) else { return [] }
        defer { destroyList(list) }
        var out: [String] = []
        var p = list
        while let s = p.pointee {
            out.append(String(cString: s))
            p += 1
        }
        return out
    }

    /// A C string GDAL returned, as its bytes (none for NULL).
    static func bytes(_ p: Text?) -> [UInt8] {
        guard let p else { return [] }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p)))
    }

    /// A C string GDAL returned, as text ("" for NULL).
    static func string(_ p: Text?) -> String {
        guard let p else { return "" }
        return String(cString: p)
    }
}
