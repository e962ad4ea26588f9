import { describe, expect, it } from "vitest";
import { html, render } from "../src/http/html.js";
import { fullTime, timeAgo } from "../src/ui/format.js";
import { factChart, isNumericSeries } from "../src/ui/chart.js";
import { factRecord } from "./support/fact-record.js";

describe("the html template", () => {
  it("escapes every interpolated value for text and attributes, once", () => {
    const hostile = `<script>alert("x")</script> & 'q' \`b\``;
    const out = render(html`<p title="${hostile}">${hostile}</p>`);
    expect(out).not.toContain("<script>");
    expect(out).toBe(
      `<p title="${"&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;q&#39; &#96;b&#96;"}">&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;q&#39; &#96;b&#96;</p>`,
    );
  });

  it("keeps nested fragments as markup, joins arrays and drops nothing-values", () => {
    const items = ["a<b", "c"].map((t) => html`<li>${t}</li>`);
    expect(render(html`<ul>${items}</ul>${null}${undefined}${false}${0}`)).toBe("<ul><li>a&#60;b</li><li>c</li></ul>0");
  });
});

describe("dates for people", () => {
  const now = Date.parse("2026-03-10T12:00:00Z");
  it("says how long ago, or how soon, in words", () => {
    expect(timeAgo("2026-03-07T12:00:00Z", now)).toBe("3 days ago");
    expect(timeAgo("2026-03-10T10:00:00Z", now)).toBe("2 hours ago");
    expect(timeAgo("2026-03-09T12:00:00Z", now)).toBe("yesterday");
    expect(timeAgo("2026-03-12T12:00:00Z", now)).toBe("in 2 days");
    expect(timeAgo("2025-03-10T12:00:00Z", now)).toBe("last year");
  });
  it("gives the full instant in UTC for the hover text", () => {
    expect(fullTime("2026-03-03T14:05:00Z")).toBe("Tue, 3 Mar 2026, 14:05 UTC");
  });
});

describe("the fact chart", () => {
  it("draws numbers only", () => {
    expect(isNumericSeries([factRecord("80", "2026-01-01T00:00:00Z", null)])).toBe(true);
    expect(isNumericSeries([factRecord("80 kg", "2026-01-01T00:00:00Z", null)])).toBe(false);
    expect(isNumericSeries([])).toBe(false);
  });
  it("puts one point per generation, hollow when replaced, linked to its version when it has a memory", () => {
    const out = render(
      factChart(
        "s p",
        [factRecord("80", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "m1"), factRecord("90", "2026-02-01T00:00:00Z", null, null)],
        Date.parse("2026-03-01T00:00:00Z"),
      ),
    );
    expect(out.match(/<circle class="point/g)).toHaveLength(2);
    expect(out.match(/class="point superseded"/g)).toHaveLength(1);
    // Linked to the version's change on its memory page.
    expect(out.match(/<a href="\/ui\/memories\/m1#version-m1"/g)).toHaveLength(1);
    expect(out).toContain('data-value="90"');
  });
});
