namespace XCall.Transport.Shm.Lending;

/// <summary>What the handshake found about cross-memory attach on one connection (see <see cref="LendProbe"/>).</summary>
/// <param name="PeerPid">The peer's process id (0: unknown, nothing is lent either way).</param>
/// <param name="PeerReadsUs">The peer read our probe: we may lend it arrays.</param>
/// <param name="WeReadPeer">We read the peer's probe: it may lend us arrays.</param>
internal readonly record struct LendTerms(int PeerPid, bool PeerReadsUs, bool WeReadPeer);
