"""GonkaApp: BaseApp plus the modules in ``x/``, wired once, here.

Every behaviour of the chain is two hops from this file: the module list below, then the module's
``module.py`` (its messages, queries, genesis and block hooks) and ``keeper.py`` (its state).
"""

from __future__ import annotations

from sdk.baseapp import BaseApp
from sdk.coins import parse_dec_coins
from sdk.context import Context
from sdk.gas import DEFAULT_SIMULATION_GAS_LIMIT
from sdk.store.commitstore import CommitStore
from sdk.tx import Tx
from x.auth import keys as auth_keys
from x.auth.ante import process_ante
from x.auth.keeper import AccountKeeper
from x.auth.module import AuthModule
from x.bank.keeper import BankKeeper
from x.bank.module import BankModule
from x.genutil.module import GenutilModule
from x.learning.keeper import LearningKeeper
from x.learning.module import LearningModule
from x.stake import keys as stake_keys
from x.stake.keeper import StakeKeeper
from x.stake.module import StakeModule


class GonkaApp(BaseApp):
    def __init__(
        self,
        store: CommitStore,
        min_gas_prices: str = "",
        index_events: frozenset[str] = frozenset(),
        simulation_gas_limit: int = DEFAULT_SIMULATION_GAS_LIMIT,
    ) -> None:
        self.account_keeper = AccountKeeper()
        module_accounts = (auth_keys.FEE_COLLECTOR, stake_keys.BONDED_POOL)
        self.bank_keeper = BankKeeper(
            self.account_keeper, blocked=frozenset(auth_keys.module_address(name) for name in module_accounts)
        )
        self.stake_keeper = StakeKeeper(self.account_keeper, self.bank_keeper)
        self.learning_keeper = LearningKeeper()
        super().__init__(
            store,
            modules=[
                AuthModule(self.account_keeper),
                BankModule(self.bank_keeper),
                StakeModule(self.stake_keeper),
                LearningModule(self.learning_keeper),
                GenutilModule(deliver=self.run_tx_safely),  # last: gentxs need every other module's genesis
            ],
            ante=self.process_ante,
            min_gas_prices=parse_dec_coins(min_gas_prices),
            index_events=index_events,
            simulation_gas_limit=simulation_gas_limit,
        )

    def process_ante(self, ctx: Context, tx: Tx, signers: list[bytes]) -> None:
        process_ante(ctx, tx, signers, self.account_keeper, self.bank_keeper)
