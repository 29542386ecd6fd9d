using System.Globalization;
using Microsoft.Diagnostics.Tracing;

namespace XCall.Profile.Tracing;

/// <summary>
/// Reads <c>XCall/CallCompleted</c> events into <see cref="CallRecord"/>s. Fields are found by name (the
/// event's metadata travels in the trace), and their positions are cached per event layout.
/// </summary>
internal sealed class CallEventParser
{
    /// <summary>The EventSource name of XCall's events.</summary>
    public const string ProviderName = "XCall";

    /// <summary>The event id of <c>CallCompleted</c>.</summary>
    public const int CallCompletedId = 1;

    /// <summary>The keyword that enables <c>CallCompleted</c>.</summary>
    public const long CallsKeyword = 1;

    private static readonly string[] s_fields =
    [
        "Contract", "Method", "Side", "Endpoint", "RequestBytes", "ReplyBytes",
        "MarshalNanoseconds", "TransportNanoseconds", "TargetNanoseconds", "Failed",
    ];

    private string[]? _layout;
    private int[] _positions = [];

    /// <summary>Events of the XCall provider that could not be read (another version's layout).</summary>
    public long Unreadable { get; private set; }

    /// <summary>Reads <paramref name="data"/> when it is a <c>CallCompleted</c> event.</summary>
    /// <returns>False for other events, and for call events missing a field (counted in <see cref="Unreadable"/>).</returns>
    public bool TryParse(TraceEvent data, out CallRecord call)
    {
        call = default;
        if ((int)data.ID != CallCompletedId || !string.Equals(data.ProviderName, ProviderName, StringComparison.Ordinal))
        {
            return false;
        }
        string[] names = data.PayloadNames;
        if (!ReferenceEquals(names, _layout))
        {
            _positions = [.. s_fields.Select(field => Array.IndexOf(names, field))];
            _layout = names;
        }
        if (_positions.Contains(-1))
        {
            Unreadable++;
            return false;
        }
        call = new CallRecord(
            Text(data, 0),
            Text(data, 1),
            Text(data, 2),
            Text(data, 3),
            Number(data, 4),
            Number(data, 5),
            Number(data, 6),
            Number(data, 7),
            Number(data, 8),
            Convert.ToBoolean(data.PayloadValue(_positions[9]), CultureInfo.InvariantCulture));
        return true;
    }

    private string Text(TraceEvent data, int field) => data.PayloadValue(_positions[field]) as string ?? "";

    private long Number(TraceEvent data, int field) =>
        Convert.ToInt64(data.PayloadValue(_positions[field]), CultureInfo.InvariantCulture);
}
