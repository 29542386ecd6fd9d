namespace XCall.Profile.Reports;

/// <summary>How <c>collect</c> prints its report.</summary>
internal enum ReportFormat
{
    /// <summary>An aligned text table for people.</summary>
    Table,

    /// <summary>One JSON object with the session's facts and a <c>methods</c> array of rows.</summary>
    Json,

    /// <summary>A header line of column names, then one line per row.</summary>
    Csv,
}
