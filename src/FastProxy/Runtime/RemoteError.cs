using System.Collections;
using XCall.Marshal;

namespace XCall.Runtime;

/// <summary>
/// Writes and reads the payload of an <see cref="Transport.FrameKind.Error"/> frame (docs/remoting.md,
/// "Error payload"): a format byte, then the exception record: type name, message, stack text, string
/// data entries, inner exception records.
/// </summary>
internal static class RemoteError
{
    /// <summary>The error payload format this build writes and reads.</summary>
    public const byte FormatVersion = 1;

    /// <summary>Inner exceptions deeper than this are not sent.</summary>
    public const int MaxDepth = 8;

    /// <summary>At most this many data entries and inner exceptions are sent per exception.</summary>
    public const int MaxItems = 64;

    /// <summary>
    /// The object id of an error frame by which the runtime refused a call before running any of it (its record
    /// names <see cref="XCallServerBusyException"/>); every other error frame has 0. The mark is in the header,
    /// where no method's exception can put it: a method that let a refusal of another server escape did run.
    /// </summary>
    public const ulong NotRun = 1;

    public static void Write(ref MarshalWriter writer, Exception exception)
    {
        writer.Write(FormatVersion);
        WriteRecord(ref writer, exception, 0);
    }

    /// <summary>An error record with no stack, data or inner exceptions (refusals of the runtime itself).</summary>
    public static void Write(ref MarshalWriter writer, string typeName, string message)
    {
        writer.Write(FormatVersion);
        writer.WriteString(typeName);
        writer.WriteString(message);
        writer.WriteString(null);
        writer.Write(0);
        writer.Write(0);
    }

    private static void WriteRecord(ref MarshalWriter writer, Exception exception, int depth)
    {
        if (exception is RemoteInvocationException remote)
        {
            writer.WriteString(remote.RemoteTypeName);
            writer.WriteString(remote.RemoteMessage);
            writer.WriteString(remote.RemoteStackTrace);
        }
        else
        {
            writer.WriteString(exception.GetType().FullName ?? exception.GetType().Name);
            writer.WriteString(exception.Message);
            writer.WriteString(exception.StackTrace);
        }
        List<KeyValuePair<string, string?>> data = DataEntries(exception);
        writer.Write(data.Count);
        foreach (KeyValuePair<string, string?> entry in data)
        {
            writer.WriteString(entry.Key);
            writer.WriteString(entry.Value);
        }
        IReadOnlyList<Exception> inners = depth + 1 >= MaxDepth ? [] : Inners(exception);
        writer.Write(inners.Count);
        foreach (Exception inner in inners)
        {
            WriteRecord(ref writer, inner, depth + 1);
        }
    }

    public static RemoteInvocationException Read(ref MarshalReader reader)
    {
        byte format = reader.Read<byte>();
        if (format != FormatVersion)
        {
            throw new XCallProtocolException($"Error payload format {format} is not supported (this build reads {FormatVersion}).");
        }
        return ReadRecord(ref reader, 0);
    }

    private static RemoteInvocationException ReadRecord(ref MarshalReader reader, int depth)
    {
        if (depth >= MaxDepth)
        {
            throw new XCallProtocolException($"Error payload nests inner exceptions deeper than {MaxDepth}.");
        }
        string type = reader.ReadString() ?? "<unknown>";
        string message = reader.ReadString() ?? string.Empty;
        string? stack = reader.ReadString();
        int dataCount = ReadCount(ref reader);
        var data = new List<KeyValuePair<string, string?>>(dataCount);
        for (int i = 0; i < dataCount; i++)
        {
            string key = reader.ReadString() ?? throw new XCallProtocolException("Error data entry without a key.");
            data.Add(new(key, reader.ReadString()));
        }
        int innerCount = ReadCount(ref reader);
        var inners = new RemoteInvocationException[innerCount];
        for (int i = 0; i < innerCount; i++)
        {
            inners[i] = ReadRecord(ref reader, depth + 1);
        }
        return new RemoteInvocationException(type, message, stack, inners, data);
    }

    private static int ReadCount(ref MarshalReader reader)
    {
        int count = reader.Read<int>();
        if ((uint)count > MaxItems)
        {
            throw new XCallProtocolException($"Error payload count {count} is out of range (0..{MaxItems}).");
        }
        return count;
    }

    /// <summary>
    /// What an error frame will carry for <paramref name="exception"/>, read now (<see cref="ToRemote"/>); when a
    /// member of the exception throws while it is read (a Message, Data or StackTrace override), the type name
    /// and a note saying so, which is certain.
    /// </summary>
    public static RemoteInvocationException Snapshot(Exception exception)
    {
        try
        {
            return ToRemote(exception);
        }
        catch (Exception unreadable)
        {
            return new RemoteInvocationException(exception.GetType().FullName ?? exception.GetType().Name,
                $"(the exception's details could not be read: {unreadable.GetType().Name})", null);
        }
    }

    /// <summary>
    /// What a caller in another load context gets for <paramref name="exception"/>: exactly what the
    /// error frame would carry (the domain transport shares no exception object).
    /// </summary>
    public static RemoteInvocationException ToRemote(Exception exception, int depth = 0)
    {
        IReadOnlyList<Exception> inners = depth + 1 >= MaxDepth ? [] : Inners(exception);
        var remoteInners = new RemoteInvocationException[inners.Count];
        for (int i = 0; i < remoteInners.Length; i++)
        {
            remoteInners[i] = ToRemote(inners[i], depth + 1);
        }
        return exception is RemoteInvocationException remote
            ? new RemoteInvocationException(remote.RemoteTypeName, remote.RemoteMessage, remote.RemoteStackTrace, remoteInners, DataEntries(exception))
            : new RemoteInvocationException(exception.GetType().FullName ?? exception.GetType().Name, exception.Message, exception.StackTrace, remoteInners, DataEntries(exception));
    }

    private static IReadOnlyList<Exception> Inners(Exception exception)
    {
        IReadOnlyList<Exception> inners = exception switch
        {
            RemoteInvocationException remote => remote.InnerExceptions,
            AggregateException aggregate => aggregate.InnerExceptions,
            { InnerException: { } inner } => [inner],
            _ => [],
        };
        return inners.Count <= MaxItems ? inners : [.. inners.Take(MaxItems)];
    }

    private static List<KeyValuePair<string, string?>> DataEntries(Exception exception)
    {
        var entries = new List<KeyValuePair<string, string?>>();
        foreach (DictionaryEntry entry in exception.Data)
        {
            if (entry.Key is string key && entry.Value is string or null && entries.Count < MaxItems)
            {
                entries.Add(new(key, (string?)entry.Value));
            }
        }
        return entries;
    }
}
