namespace XCall.Channels.Distributed;

/// <summary>What a name of the directory stands for; the process that created it hosts it.</summary>
internal enum ConstructKind
{
    One2One,
    Any2One,
    One2Any,
    Any2Any,
    Barrier,
    Bucket,
}
