global using Barrier = XCall.Channels.Barrier;
