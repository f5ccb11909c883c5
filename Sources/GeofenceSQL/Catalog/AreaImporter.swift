import GeofenceCore

/// Imports a GeoJSON FeatureCollection into the catalog, streaming.
///
/// All or nothing: the import runs in one transaction, and any bad feature
/// rolls it back with an error naming the file, feature index, id and field.
/// The seed's server import is `replace` (clear areas and conditions first)
/// plus `defaultConditions` (an IN and an OUT condition per area, numbered on
/// from the highest existing id, so from 1 after a replace), guarded by the
/// set's update time (`updated_at` member of the collection, or `updatedAt`).
public struct AreaImporter {
    public struct Options {
        public var group: String?
        /// The property holding each feature's area id, instead of `area_id` (`--id-field`).
        public var idField: String?
        /// The property holding each feature's group id, instead of `group_id` (`--group-field`).
        public var groupField: String?
        public var replace = false
        public var upsert = false
        public var defaultConditions = false
        public var makeValid = false
        /// Overrides the collection's `updated_at` member.
        public var updatedAt: Timestamp?
        /// Import even if the set is older than the one imported before.
        public var force = false
        /// Read the features from this stream instead of the file (errors still name the file).
        public var stream: ImportStream?
        public init() {}
    }

    public struct Report {
        /// Areas written, each id once: with `upsert`, a feature that repeats
        /// an id of an earlier one in the file replaces it (the last wins, as
        /// in a log of changes) and is counted in `replacedInFile` instead.
        public var imported = 0
        public var polygons = 0
        public var circles = 0
        public var replacedInFile = 0
        /// With `upsert`: areas of the catalog (before this import) that a feature replaced.
        public var replacedInCatalog = 0
        public var conditions = 0
        /// (the feature as errors name it, area id, GEOS's reason) for each repaired polygon.
        public var repaired: [(item: String, id: String, reason: String)] = []
        /// SpatiaLite index triggers on gf_areas whose stored text was not SpatiaLite's, re-created from it.
        public var repairedTriggers: [String] = []
        public var updatedAt: Timestamp?
    }

    let db: Connection
    public init(_ db: Connection) { self.db = db }

    public func run(path: String, options: Options, progress: ((Int, Int) -> Void)? = nil) throws -> Report {
        var parser = try FeatureParser(path: path, keys: FeatureKeys(group: options.group, idField: options.idField, groupField: options.groupField),
                                   stream: options.stream)
        let total = parser.total
        let areas = AreaStore(db)
        let conditions = ConditionStore(db)
        let settings = Settings(db)
        return try db.transaction {
            var report = Report()
            if options.replace {
                try areas.removeAll()
            }
            var spatialIndex = BulkSpatialIndex(db)
            try spatialIndex.begin()
            let suspended = try ImportTriggers.suspend(db)
            // The last default condition's id, once the first is made.
            var lastCondition: Int64?
            // With upsert: whether each id this file has written so far is a circle.
            var written: [String: Bool] = [:]
            try parser.run { batch in
                guard case .features(let parsed, let read) = batch else {
                    if case .failed(let error) = batch { throw error }
                    return
                }
                for var p in parsed {
                    do {
                        if case .repaired(let reason) = try areas.checkValidity(&p.area, geometry: p.row.geometry, makeValid: options.makeValid) {
                            report.repaired.append((ImportStream.item(p.index, layer: options.stream?.layer), p.area.areaId, reason))
                            p.row = AreaStore.Row(p.area)
                        }
                        // An area an upsert replaces keeps the conditions it has: the
                        // default pair goes only to an area new to the catalog.
                        let isNew = try !options.upsert || !areas.exists(p.area.areaId)
                        if !isNew && written[p.area.areaId] == nil { report.replacedInCatalog += 1 }
                        // Its default pair is implied by its row (`ImpliedConditions`):
                        // the next two ids, the OUT's checked to exist as well.
                        var implied: Int64?
                        if options.defaultConditions && isNew {
                            let first = try ConditionStore.after(lastCondition ?? conditions.highestId())
                            lastCondition = try ConditionStore.after(first)
                            implied = first
                            report.conditions += 2
                        }
                        try areas.insert(p.row, upsert: options.upsert, earlier: .inCatalogOrFile, impliedConditions: implied)
                        var isCircle = false
                        if case .circle = p.area.shape { isCircle = true }
                        if options.upsert, let earlier = written.updateValue(isCircle, forKey: p.area.areaId) {
                            if earlier { report.circles -= 1 } else { report.polygons -= 1 }
                            report.replacedInFile += 1
                            report.imported -= 1
                        }
                        if isCircle { report.circles += 1 } else { report.polygons += 1 }
                    } catch let e as InputError {
                        throw e.located(file: path, item: ImportStream.item(p.index, layer: options.stream?.layer), id: p.area.areaId)
                    }
                    report.imported += 1
                }
                progress?(read, total)
            }
            progress?(total, total)
            try spatialIndex.finish(inserted: report.imported)
            do { try areas.requireDistinctIds() } catch let e as InputError { throw e.located(file: path) }
            report.repairedTriggers = spatialIndex.repaired
            try ImportTriggers.resume(db, suspended)

            let updated = try options.updatedAt ?? updatedAtMember(parser.foreignMembers, path: path)
            report.updatedAt = updated
            if let updated {
                if let previousText = try settings.get("import_updated_at"), let previous = try? Timestamp.parse(previousText),
                   updated < previous, !options.force {
                    throw InputError("this area set was updated at \(updated.iso8601), before the set already imported (updated at \(previous.iso8601)): nothing imported; pass --force to import the older set anyway",
                                     file: path, field: "updated_at")
                }
                try settings.setUnchecked("import_updated_at", updated.storageText)
            }
            return report
        }
    }

    func updatedAtMember(_ members: [(String, JSONValue)], path: String) throws -> Timestamp? {
        guard let v = members.first(where: { $0.0 == "updated_at" })?.1 else { return nil }
        guard case .string(let s) = v else { throw InputError("must be a time string", file: path, field: "updated_at") }
        do { return try Timestamp.parse(s) } catch let e as Timestamp.ParseError {
            throw InputError(e.description, file: path, field: "updated_at")
        }
    }
}
