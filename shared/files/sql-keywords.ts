/**
 * DuckDB's keywords that cannot name a table unless quoted: its `reserved` and `type_function`
 * keywords (`SELECT keyword_name FROM duckdb_keywords()`), but for `column_name` and `unreserved`
 * ones, which can. A data file named after one ("order.csv") gets another table name
 * (table-names.ts): unquoted, `SELECT * FROM order` is a syntax error the model would have to
 * work out, and every ORDER BY would name the file. Listed here, not asked of DuckDB, because the
 * chat function names tables without the engine; test/shared/files/sql-bounds.integration.test.ts
 * names a table after every keyword DuckDB reports and fails when this list falls behind it.
 */
export const UNQUOTED_TABLE_KEYWORDS = new Set(
  // reserved
  (
    "all analyse analyze and any array as asc asymmetric both case cast check collate column " +
    "constraint create default deferrable desc describe distinct do else end except false fetch for " +
    "foreign from group having in initially intersect into lambda lateral leading limit not null " +
    "offset on only or order pivot pivot_longer pivot_wider placing primary qualify references " +
    "returning select show some summarize symmetric table then to trailing true union unique unpivot " +
    "using variadic when where window with " +
    // type_function
    "anti asof at authorization binary by collation concurrently cross freeze full glob ilike inner " +
    "is isnull join left like natural notnull outer overlaps positional right semi similar " +
    "tablesample unpack verbose"
  ).split(" "),
);
