"""GonkaApp: BaseApp plus the modules in ``x/``, wired once, here.

Every behaviour of the chain is two hops from this file: the module list below, then the module's
``module.py`` (its messages, queries, genesis and block hooks) and ``keeper.py`` (its state).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sdk.baseapp import BaseApp
from sdk.coins import parse_dec_coins
from sdk.context import BlockHeader, Context
from sdk.gas import DEFAULT_SIMULATION_GAS_LIMIT
from sdk.module import Module
from sdk.params import GOV_AUTHORITY
from sdk.snapshots.manager import SnapshotManager
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore
from sdk.tx import Tx
from x.auth import keys as auth_keys
from x.auth.ante import process_ante
from x.auth.keeper import AccountKeeper
from x.auth.module import AuthModule
from x.bank.keeper import BankKeeper
from x.bank.module import BankModule
from x.bls.keeper import BlsKeeper
from x.bls.module import BlsModule
from x.consensus.module import ConsensusModule
from x.epochs.keeper import EpochsKeeper
from x.epochs.module import EpochsModule
from x.genutil.module import GenutilModule
from x.gov import keys as gov_keys
from x.gov.keeper import GovKeeper
from x.gov.module import GovModule
from x.inference import keys as inference_keys
from x.inference.keeper import InferenceKeeper
from x.inference.module import InferenceModule
from x.learning import keys as learning_keys
from x.learning.keeper import LearningKeeper
from x.learning.module import LearningModule
from x.poc.hooks import EpochHooks as PocEpochHooks
from x.poc.keeper import PocKeeper
from x.poc.module import PocModule
from x.pool import keys as pool_keys
from x.pool.keeper import PoolKeeper
from x.pool.module import PoolModule
from x.rewards import keys as rewards_keys
from x.rewards.keeper import RewardsKeeper
from x.rewards.module import RewardsModule
from x.slashing import keys as slashing_keys
from x.slashing.keeper import SlashingKeeper
from x.slashing.module import SlashingModule
from x.sprint import types as sprint_types
from x.sprint.keeper import SprintKeeper
from x.sprint.module import SprintModule
from x.stake import keys as stake_keys
from x.stake.keeper import StakeKeeper
from x.stake.module import StakeModule
from x.upgrade.keeper import UpgradeHandler, UpgradeKeeper
from x.upgrade.module import UpgradeModule
from x.upgrade.rehearsal import REHEARSAL_CONSENSUS_VERSION, rehearsal_migrations
from x.vesting.keeper import VestingKeeper
from x.vesting.module import VestingModule

MODULE_ACCOUNT_PERMISSIONS: dict[str, tuple[str, ...]] = {
    auth_keys.FEE_COLLECTOR: (),
    stake_keys.BONDED_POOL: (auth_keys.STAKING,),
    stake_keys.UNBONDING_POOL: (auth_keys.STAKING,),
    slashing_keys.SLASHED_POOL: (),
    gov_keys.MODULE_NAME: (auth_keys.BURNER,),  # the authority: passed proposals' messages run as it
    gov_keys.DEPOSITS_ACCOUNT: (auth_keys.BURNER,),  # proposal deposits; burns them on veto / missed quorum
    pool_keys.POOL_ACCOUNT: (),
    rewards_keys.REWARDS_ACCOUNT: (auth_keys.MINTER,),
    inference_keys.INFERENCE_ACCOUNT: (),  # the escrow of started inferences
    learning_keys.LEARNING_ACCOUNT: (),  # the budgets of training runs
}
"""The module accounts and what each may do (the SDK's ``maccPerms``): bank mints only into an account with
``minter`` and burns only from one with ``burner``."""


class GonkaApp(BaseApp):
    def __init__(
        self,
        store: CommitStore,
        min_gas_prices: str = "",
        index_events: frozenset[str] = frozenset(),
        simulation_gas_limit: int = DEFAULT_SIMULATION_GAS_LIMIT,
        check_invariants: bool = False,
        module_config: Mapping[str, Mapping[str, Any]] | None = None,
        authority: bytes = GOV_AUTHORITY,
        snapshots: SnapshotManager | None = None,
        test_upgrade: str | None = None,
    ) -> None:
        """``module_config``: node-local settings by module name (e.g. a key from the node's home), never
        state; each module's ``configure`` receives its own (sdk/README.md, module interface).
        ``authority``: the address whose ``MsgUpdateParams`` every module accepts (default: governance's
        module account, as in the Cosmos SDK); every node of a chain must use the same. ``snapshots``: the node's
        state-sync snapshots (app.toml ``[state_sync]``), taken after commits and served to peers.
        ``test_upgrade`` (TEST ONLY, ``gonkad start --test-upgrade``): this binary carries the plan of that name
        (x/upgrade/rehearsal.py)."""
        self.authority = authority
        self._build_keepers(authority)
        modules = self._modules(authority, test_upgrade)
        self.upgrade_keeper.set_modules(modules)
        self.upgrade_keeper.set_handlers(self._upgrade_handlers(test_upgrade))
        super().__init__(
            store,
            modules=modules,
            ante=self.process_ante,
            min_gas_prices=parse_dec_coins(min_gas_prices),
            index_events=index_events,
            simulation_gas_limit=simulation_gas_limit,
            check_invariants=check_invariants,
            module_config=module_config,
            snapshots=snapshots,
        )

    def _build_keepers(self, authority: bytes) -> None:
        """Every module's keeper, each given the keepers it needs, then the hooks between them."""
        self.account_keeper = AccountKeeper(MODULE_ACCOUNT_PERMISSIONS, authority)
        self.bank_keeper = BankKeeper(
            self.account_keeper,
            blocked=frozenset(map(auth_keys.module_address, MODULE_ACCOUNT_PERMISSIONS)),
            authority=authority,
        )
        self.epochs_keeper = EpochsKeeper(authority)
        # x/vesting: locks coins (reward/work payouts by epoch, genesis vesting accounts by block time); bank
        # refuses to send them but lets them be deposited as collateral (delegate_coins), tracked here.
        self.vesting_keeper = VestingKeeper(self.bank_keeper, self.epochs_keeper, authority)
        self.bank_keeper.set_locked_coins_hook(self.vesting_keeper.locked_coins)
        self.bank_keeper.set_delegation_hooks(self.vesting_keeper)
        self.stake_keeper = StakeKeeper(self.account_keeper, self.bank_keeper, self.epochs_keeper, authority)
        self.bls_keeper = BlsKeeper(self.stake_keeper)  # hosts' BLS keys (aggregate signatures)
        self.pool_keeper = PoolKeeper(self.account_keeper, self.bank_keeper, authority)
        self.slashing_keeper = SlashingKeeper(
            self.stake_keeper, self.bank_keeper, self.account_keeper, self.pool_keeper, authority
        )
        # x/sprint: the race's seed, commitments and verdicts; at set validators its weights go to x/stake, so
        # its epoch hook runs before stake's, which turns them into the validator set.
        self.sprint_keeper = SprintKeeper(
            self.account_keeper, self.epochs_keeper, self.stake_keeper, self.slashing_keeper, self.bls_keeper, authority
        )
        self._build_payment_keepers(authority)
        # The epoch's proof: x/sprint's summary carries x/inference's work roots, and its hash is an extra
        # the votes sign (x/bls).
        self.sprint_keeper.set_work_keeper(self.inference_keeper)
        self.bls_keeper.add_extra_provider(sprint_types.SUMMARY_EXTRA, self.sprint_keeper)
        # x/poc: PoC V2 samples finished inferences (x/inference's finish hook) for re-execution by another host.
        # A mismatch opens a dispute its voters decide; the loser is slashed (x/slashing), validation is work.
        self.poc_keeper = PocKeeper(
            self.stake_keeper,
            self.bls_keeper,
            self.inference_keeper,
            self.epochs_keeper,
            self.slashing_keeper,
            self.rewards_keeper,
            authority,
        )
        self.inference_keeper.set_finish_hooks([self.poc_keeper])
        self.rewards_keeper.set_standing(self.poc_keeper)  # an INVALID host's epoch share goes to the pool
        self.sprint_keeper.set_standing(self.poc_keeper)  # and it gets no weight at the next set validators
        self.epochs_keeper.set_hooks(
            [
                self.sprint_keeper,
                self.stake_keeper,
                self.inference_keeper,
                PocEpochHooks(self.poc_keeper),  # before rewards: a host's standing is settled when it pays
                self.rewards_keeper,
                self.vesting_keeper,
            ]
        )
        # x/learning: training runs' budgets escrowed and paid through vesting as work (x/rewards); checkpoints
        # replayed by hosts drawn with x/poc's beacon, losers slashed (x/slashing). A model trained by a run is
        # registered (x/inference) only from a finished, valid run's final weights.
        self.learning_keeper = LearningKeeper(
            self.account_keeper,
            self.bank_keeper,
            self.vesting_keeper,
            self.stake_keeper,
            self.slashing_keeper,
            self.rewards_keeper,
            self.epochs_keeper,
            self.poc_keeper,
            authority,
        )
        self.inference_keeper.set_learning(self.learning_keeper)
        # Governance runs passed proposals through the router (BaseApp.execute_packed) as the authority;
        # "burned" deposits go to the community pool when x/pool's deposits_to_pool says so.
        self.gov_keeper = GovKeeper(
            self.account_keeper, self.bank_keeper, self.stake_keeper, self.execute_packed, self.pool_keeper, authority
        )
        self.upgrade_keeper = UpgradeKeeper(authority)

    def _build_payment_keepers(self, authority: bytes) -> None:
        """x/rewards and x/inference, the keepers that pay hosts (through x/vesting)."""
        self.rewards_keeper = RewardsKeeper(  # every host's share vests (x/vesting)
            self.account_keeper,
            self.bank_keeper,
            self.epochs_keeper,
            self.stake_keeper,
            self.pool_keeper,
            vesting=self.vesting_keeper,
            authority=authority,
            fee_collector=auth_keys.FEE_COLLECTOR,
        )
        # x/inference: models, ML nodes, inferences (escrow → payment through vesting, refund), work reported
        # to rewards; its epoch hook stores each host's epoch root before rewards pays the epoch.
        self.inference_keeper = InferenceKeeper(
            self.account_keeper,
            self.bank_keeper,
            self.vesting_keeper,
            self.stake_keeper,
            self.rewards_keeper,
            self.epochs_keeper,
            authority,
        )

    def _upgrade_handlers(self, test_upgrade: str | None) -> dict[str, UpgradeHandler]:
        """The software upgrades this binary carries, by plan name: at a plan's height a node without its
        handler halts for the binary that has it (x/upgrade). None yet besides a test binary's."""
        handlers: dict[str, UpgradeHandler] = {}
        if test_upgrade:
            handlers[test_upgrade] = self.upgrade_keeper.migrate_all
        return handlers

    def _upgrade_module(self, test_upgrade: str | None) -> UpgradeModule:
        if test_upgrade:
            migrations = rehearsal_migrations(self.upgrade_keeper, test_upgrade)
            return UpgradeModule(self.upgrade_keeper, REHEARSAL_CONSENSUS_VERSION, migrations)
        return UpgradeModule(self.upgrade_keeper)

    def _modules(self, authority: bytes, test_upgrade: str | None) -> list[Module]:
        """The modules in the app's order: genesis, the block hooks and the invariants run in it."""
        return [
            AuthModule(self.account_keeper),
            BankModule(self.bank_keeper),
            EpochsModule(self.epochs_keeper),  # first of the block hooks: the others act on its stage
            VestingModule(self.vesting_keeper),  # keeps the block time before any other hook spends
            StakeModule(self.stake_keeper),
            BlsModule(self.bls_keeper, authority),  # after stake: its genesis checks each key's operator is a host
            SlashingModule(self.slashing_keeper),
            SprintModule(self.sprint_keeper),
            PoolModule(self.pool_keeper),  # after bank: its genesis checks the pool's balance
            RewardsModule(self.rewards_keeper),
            InferenceModule(self.inference_keeper),  # after bank: its genesis checks the escrow held
            PocModule(self.poc_keeper),  # after inference: its end block draws the inferences finished before
            LearningModule(self.learning_keeper),
            GovModule(self.gov_keeper, self.packed_signers),
            ConsensusModule(authority),
            self._upgrade_module(test_upgrade),  # its pre_block applies a plan (or halts) before every other hook
            # last: gentxs need every other module's genesis
            GenutilModule(deliver=self.run_tx_safely, validator_set_updates=self.stake_keeper.genesis_validator_set),
        ]

    def refuse_unknown_upgrade(self) -> None:
        """At start-up, before CometBFT: UpgradeNeeded if the node halted at a plan this binary has no handler
        for (the next block is the plan's), so an old binary is never restarted into the same halt."""
        committed = Context(CacheKV(self.store), BlockHeader(self.chain_id, self.store.version, 0))
        self.upgrade_keeper.refuse_unknown(committed)

    def process_ante(self, ctx: Context, tx: Tx, signers: list[bytes]) -> None:
        process_ante(ctx, tx, signers, self.account_keeper, self.bank_keeper)
