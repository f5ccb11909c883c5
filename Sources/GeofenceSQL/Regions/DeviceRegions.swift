import GeofenceCore

/// The server side of a phone's region-monitoring loop: the plan for one
/// position, from the catalog and the stored positioning and region settings.
public enum DeviceRegions {
    /// The `count` nearest areas as regions, and the re-sync region that ends
    /// just short of the next one. With a speed, the re-sync radius is also
    /// capped by the wake-up radius the positioning settings give that speed.
    public static func plan(_ db: Connection, search: NearestAreas, at p: LonLat, count: Int,
                            speedMps: Double?, time: Timestamp?) throws -> RegionPlan {
        let settings = Settings(db, tables: try CatalogTables(db))
        var options = try settings.regionOptions()
        if let v = speedMps { options.wakeRadiusM = try settings.positioning().monitorRadius(speedMps: v).radiusM }
        let found = try search.nearest(to: p, count: count + 1, at: time)
        let chosen = found.prefix(count).map {
            RegionPlan.Candidate(areaId: $0.areaId, distanceM: $0.distanceM, shape: $0.shape, validUntil: $0.validUntil)
        }
        let next = found.count > count ? found[count].distanceM : nil
        return RegionPlan(position: p, nearest: chosen, nextDistanceM: next, at: time, options: options)
    }
}
