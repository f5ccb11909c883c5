/// Where an imported feature's id and group come from.
///
/// By default the id is the `area_id` property (else the feature's own `id`)
/// and the group the `group_id` property, the names `export` writes. A source
/// made elsewhere keeps its ids in a column of its own (`fence_code`,
/// `OBJECTID`): `idField` names it, and then the id is that property and
/// nothing else (no fallback to the feature's `id`, which would be a silent
/// second guess). Likewise `groupField`. A property used as the id or group
/// is an area field, not a free property. `group` (the `--group` option)
/// wins over any group property: the caller named the group explicitly.
public struct FeatureKeys: Sendable {
    public var group: String?
    /// The property holding the area id; nil: `area_id`, else the feature's `id`.
    public var idField: String?
    /// The property holding the group id; nil: `group_id`.
    public var groupField: String?

    public init(group: String? = nil, idField: String? = nil, groupField: String? = nil) {
        self.group = group; self.idField = idField; self.groupField = groupField
    }

    /// The id property's name, as errors name it.
    var idName: String { idField ?? "area_id" }
    /// The group property's name, as errors name it.
    var groupName: String { groupField ?? "group_id" }

    /// Whether `name` is a property these keys read as the id or the group.
    func isKey(_ name: String) -> Bool { name == idName || name == groupName }
}
