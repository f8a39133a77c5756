test("one", () => {});
test("two", () => {});
describe("grp", () => { test("three", () => {}); describe("in", () => { test("four", () => {}); }); test.each([1,2])("each %i", (x) => {}); });
test.skip("skipped", () => {});
test.todo("todo");
