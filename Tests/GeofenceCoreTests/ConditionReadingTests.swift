import XCTest
@testable import GeofenceCore

/// The short-circuits in front of reading a stored condition and of
/// explaining a blocked one give what the general code gives.
final class ConditionReadingTests: XCTestCase {
    /// `Weekdays.stored` reads the form the catalog stores, and nothing else.
    func testStoredWeekdaysAreReadAsTheGeneralParseReadsThem() throws {
        for text in ["Mon", "Sun", "Mon,Tue", "Mon,Tue,Wed,Thu,Fri,Sat,Sun", "Sat,Mon", "Mon,Mon", "Fri,Sat"] {
            XCTAssertEqual(Weekdays.stored(text), try Weekdays.parse(text), text)
        }
        // Other spellings go to the general parse: lower case, spaces, full names, an empty item.
        for text in ["mon", "Mon, Tue", "Monday", "Mon,,Tue", "MON", " Mon", "Mon,"] {
            XCTAssertNil(Weekdays.stored(text), text)
        }
        XCTAssertEqual(try Weekdays.parse("mon, TUE"), try Weekdays.parse("Mon,Tue"))
        // Neither form takes what is not a weekday.
        for text in ["Mon,Tux", "MonXTue", "", "Mo", "Mon;Tue"] {
            XCTAssertNil(Weekdays.stored(text), text)
            XCTAssertThrowsError(try Weekdays.parse(text), text)
        }
    }

    /// A blocked condition's reason, written only when an explanation asks, in the words it always had.
    func testBlockedConditionsAreExplainedInTheirWords() throws {
        var c = ConditionDefinition(conditionId: 7, areaId: "A", timing: .IN)
        c.weekdays = try Weekdays.parse("Sat,Sun")
        func why(_ c: ConditionDefinition, day: Int, minute: Int, last: Int? = nil) -> String? {
            let local = LocalTime(day: day, secondOfDay: minute * 60)
            guard case .blocked(let b) = ConditionFilter.check(c, local: local, lastNotifiedDay: last) else { return nil }
            return b.description
        }
        let day = CivilDate.toDays(2026, 11, 20)   // a Friday
        XCTAssertEqual(why(c, day: day, minute: 600), "weekday Fri not in Sat,Sun")
        c.weekdays = nil
        c.startMinute = 9 * 60
        c.endMinute = 17 * 60
        XCTAssertEqual(why(c, day: day, minute: 8 * 60 + 5), "local time 08:05 outside the window 09:00–17:00")
        c.endMinute = nil
        XCTAssertEqual(why(c, day: day, minute: 60), "local time 01:00 outside the window 09:00–")
        c.startMinute = nil
        c.startDay = day + 1
        XCTAssertEqual(why(c, day: day, minute: 60), "local date 2026-11-20 before the period start 2026-11-21")
        c.startDay = nil
        c.endDay = day - 1
        XCTAssertEqual(why(c, day: day, minute: 60), "local date 2026-11-20 after the period end 2026-11-19")
        c.endDay = nil
        c.renotifySuppressDays = 3
        XCTAssertEqual(why(c, day: day, minute: 60, last: day - 1),
                       "suppressed until 2026-11-22 (notified 2026-11-19)")
        XCTAssertNil(why(c, day: day, minute: 60, last: day - 3))
        c.renotifySuppressDays = Int.max
        XCTAssertEqual(why(c, day: day, minute: 60, last: day - 1), "suppressed for \(Int.max) days (notified 2026-11-19)")
    }
}
