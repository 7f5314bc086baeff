import type { HTMLAttributes, ReactNode } from "react";

/** Attributes the page puts on a row or a cell: its test id and data attributes, `aria-current`, a class. */
type Attributes<Element> = HTMLAttributes<Element> & { [data: `data-${string}`]: string | number | undefined };

export interface Column<Row> {
  /** The column's header cell (`<th scope="col">`). */
  header: ReactNode;
  /** What the cell of `row` shows. */
  cell: (row: Row) => ReactNode;
  /** The cell names its row (`<th scope="row">`), as the first column of a list of named things does. */
  rowHeader?: boolean;
  /** Attributes of the cell of `row` (a test id, a class). */
  cellProps?: (row: Row) => Attributes<HTMLTableCellElement>;
}

export interface DataTableProps<Row> {
  /** Names the table for screen readers (and for the eye). */
  caption: ReactNode;
  columns: ReadonlyArray<Column<Row>>;
  rows: readonly Row[];
  /** A key unique among the rows and stable across refreshes, so React keeps each row's state (a transaction in flight). */
  rowKey: (row: Row) => string;
  /** Attributes of the row of `row` (its test id and data attributes). */
  rowProps?: (row: Row) => Attributes<HTMLTableRowElement>;
  /** Said in one full-width row when there are no rows; nothing when undefined (still loading, or said elsewhere). */
  empty?: ReactNode;
  /** Rows after the data rows, written by the page (a summary row that spans columns). */
  extraRows?: ReactNode;
}

/**
 * A table of rows under column headers, with a caption, in the page's scrolling wrapper: on a narrow
 * screen the table scrolls inside it (focusable, so the keyboard scrolls it too) and the page itself never
 * scrolls sideways.
 */
export function DataTable<Row>({ caption, columns, rows, rowKey, rowProps, empty, extraRows }: DataTableProps<Row>) {
  return (
    <div className="table-wrap" tabIndex={0}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={index} scope="col">
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowProps?.(row)}>
              {columns.map((column, index) =>
                column.rowHeader === true ? (
                  <th key={index} scope="row" {...column.cellProps?.(row)}>
                    {column.cell(row)}
                  </th>
                ) : (
                  <td key={index} {...column.cellProps?.(row)}>
                    {column.cell(row)}
                  </td>
                ),
              )}
            </tr>
          ))}
          {extraRows}
          {rows.length === 0 && empty !== undefined && (
            <tr>
              <td colSpan={columns.length}>{empty}</td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
